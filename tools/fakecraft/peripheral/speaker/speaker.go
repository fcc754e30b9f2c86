// Package speaker is CC: Tweaked's speaker peripheral, silent: it takes notes, sounds and
// DFPWM audio with CC's checks and limits (8 notes a tick, one sound a tick, audio in
// buffers of at most 128 Ki samples, one waiting at a time) and keeps CC's timing, so
// speaker_audio_empty comes when CC would send the next buffer to the players: half a
// second before the audio already sent has played. What it was asked to play is kept for
// Go (Played).
package speaker

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
	"fakecraft/peripheral"
)

// Limits and rates, CC's (SpeakerPeripheral, DfpwmState, the maximum_notes_per_tick
// server setting).
const (
	SampleRate     = 48000
	MaxNotesATick  = 8
	MaxAudioLength = 128 * 1024
	maxVolume      = 3.0
	tick           = 0.05
	// clientBuffer is how far ahead of the players CC keeps the audio it sends.
	clientBuffer = 500 * time.Millisecond
)

// Instruments are the note block instruments playNote takes (Minecraft 1.20's).
var Instruments = []string{
	"harp", "basedrum", "snare", "hat", "bass", "flute", "bell", "guitar", "chime", "xylophone",
	"iron_xylophone", "cow_bell", "didgeridoo", "bit", "banjo", "pling",
	"zombie", "skeleton", "creeper", "dragon", "wither_skeleton", "piglin", "custom_head",
}

// soundName is a Minecraft resource location: an optional namespace, then a path. Either
// may be empty, as Minecraft's ResourceLocation.tryParse takes them: "" and ":" are
// minecraft: with an empty path.
var soundName = regexp.MustCompile(`^([a-z0-9_.-]*:)?[a-z0-9_./-]*$`)

// musicDiscs are the sound events of Minecraft 1.21.1's jukebox songs, which CC's
// playSound refuses (false) so a speaker cannot play a music disc.
var musicDiscs = map[string]bool{}

func init() {
	for _, song := range []string{"5", "11", "13", "blocks", "cat", "chirp", "creator",
		"creator_music_box", "far", "mall", "mellohi", "otherside", "pigstep", "precipice",
		"relic", "stal", "strad", "wait", "ward"} {
		musicDiscs["minecraft:music_disc."+song] = true
	}
}

// isMusicDisc reports whether a sound name (valid for soundName) is a music disc's, its
// namespace minecraft when it is absent or empty, as Minecraft reads a resource location.
func isMusicDisc(name string) bool {
	namespace, path, found := strings.Cut(name, ":")
	if !found {
		namespace, path = "", name
	}
	if namespace == "" {
		namespace = "minecraft"
	}
	return musicDiscs[namespace+":"+path]
}

// Sound is one thing a speaker was asked to play.
type Sound struct {
	// Kind is "note", "sound" or "audio".
	Kind string
	// Name is the instrument or the sound's name ("" for audio).
	Name string
	// Volume and Pitch as played (a note's pitch as given, 0-24).
	Volume, Pitch float64
	// Samples is an audio buffer's length.
	Samples int
}

// Speaker is one speaker. It is safe for concurrent use.
type Speaker struct {
	methods map[string]peripheral.Method

	mu        sync.Mutex
	computers []*peripheral.Access
	played    []Sound
	// This tick's notes and sound, cleared on the next tick.
	notes      int
	soundTick  bool
	tickQueued bool
	// Audio: a buffer waiting to be sent, when the audio sent so far ends on the clock of
	// the computer that played it, and whether anything was ever sent.
	pending   bool
	clientEnd time.Time
	unplayed  bool
	audioRuns bool // an audio stream was started and not stopped
}

// New returns a speaker.
func New() *Speaker {
	s := &Speaker{}
	s.methods = s.methodTable()
	return s
}

// Types implements peripheral.Peripheral.
func (s *Speaker) Types() []string { return []string{"speaker"} }

// Methods implements peripheral.Peripheral.
func (s *Speaker) Methods() map[string]peripheral.Method { return s.methods }

// Attach implements peripheral.Peripheral.
func (s *Speaker) Attach(a *peripheral.Access) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.computers = append(s.computers, a)
}

// Detach implements peripheral.Peripheral.
func (s *Speaker) Detach(a *peripheral.Access) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range s.computers {
		if c == a {
			s.computers = append(s.computers[:i], s.computers[i+1:]...)
			return
		}
	}
}

// Played returns what the speaker was asked to play, in order.
func (s *Speaker) Played() []Sound {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sound(nil), s.played...)
}

// nextTick clears this tick's notes and sound on the next tick. Caller holds mu.
func (s *Speaker) nextTick(a *peripheral.Access) {
	if s.tickQueued {
		return
	}
	s.tickQueued = true
	a.After(tick, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.notes, s.soundTick, s.tickQueued = 0, false, false
	})
}

// playingAudio reports whether audio sent is still playing (or about to). Caller holds mu.
func (s *Speaker) playingAudio(now time.Time) bool {
	return s.audioRuns && (s.unplayed || !s.clientEnd.Before(now))
}

// send hands the waiting buffer to the players once they are less than half a second from
// the end of what they have, and tells every computer the speaker has room again; until
// then it looks again each tick. It runs on the goroutine of the computer that played.
func (s *Speaker) send(a *peripheral.Access, samples int) {
	s.mu.Lock()
	if !s.pending {
		s.mu.Unlock()
		return
	}
	now := a.Now()
	if now.Before(s.clientEnd.Add(-clientBuffer)) {
		s.mu.Unlock()
		a.After(tick, func() { s.send(a, samples) })
		return
	}
	s.pending, s.unplayed = false, false
	s.clientEnd = later(now, s.clientEnd).Add(time.Duration(samples/8*8) * time.Second / SampleRate)
	computers := append([]*peripheral.Access(nil), s.computers...)
	s.mu.Unlock()
	for _, c := range computers {
		c.QueueEvent("speaker_audio_empty", c.Name())
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// optFinite is an optional finite number argument, def for nil.
func optFinite(L *lua.LState, n int, def float64) float64 {
	return luakit.OptFinite(L, n, def)
}

// sample is item i of an audio table as CC's encoder reads it (LuaTable.getInt): a
// finite number ("table item #3 is not number (got string)"), cast to a Java int (1.5 is
// 1, 2^32 is 0), then from -128 to 127.
func sample(L *lua.LState, audio *lua.LTable, i int) int {
	v := audio.RawGetInt(i)
	n, ok := v.(lua.LNumber)
	if !ok || math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		luakit.Raise(L, "table item #%d is not number (got %s)", i, luakit.TypeName(v))
	}
	level := luakit.JavaInt(float64(n))
	if level < -128 || level > 127 {
		luakit.Raise(L, "table item #%d must be between -128 and 127", i)
	}
	return level
}

func clampVolume(v float64) float64 { return min(max(v, 0), maxVolume) }

// methodTable is CC's SpeakerPeripheral.
func (s *Speaker) methodTable() map[string]peripheral.Method {
	return map[string]peripheral.Method{
		"playNote": func(L *lua.LState, a *peripheral.Access) int {
			name := luakit.StrictString(L, 1)
			volume := clampVolume(optFinite(L, 2, 1))
			pitch := optFinite(L, 3, 1)
			known := false
			for _, i := range Instruments {
				known = known || strings.EqualFold(i, name)
			}
			if !known {
				// CC names the instrument it failed to find, which is always null.
				luakit.RaiseMessage(L, `Invalid instrument, "null"!`)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.notes >= MaxNotesATick {
				L.Push(lua.LFalse)
				return 1
			}
			s.notes++
			s.nextTick(a)
			s.played = append(s.played, Sound{Kind: "note", Name: strings.ToLower(name), Volume: volume, Pitch: pitch})
			L.Push(lua.LTrue)
			return 1
		},
		"playSound": func(L *lua.LState, a *peripheral.Access) int {
			name := luakit.StrictString(L, 1)
			volume := clampVolume(optFinite(L, 2, 1))
			pitch := optFinite(L, 3, 1)
			if !soundName.MatchString(name) {
				luakit.RaiseMessage(L, fmt.Sprintf("Malformed sound name '%s' ", name))
			}
			if isMusicDisc(name) {
				L.Push(lua.LFalse)
				return 1
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.soundTick || s.playingAudio(a.Now()) {
				L.Push(lua.LFalse)
				return 1
			}
			s.soundTick, s.audioRuns = true, false
			s.nextTick(a)
			s.played = append(s.played, Sound{Kind: "sound", Name: name, Volume: volume, Pitch: pitch})
			L.Push(lua.LTrue)
			return 1
		},
		"playAudio": func(L *lua.LState, a *peripheral.Access) int {
			audio, ok := L.Get(1).(*lua.LTable)
			if !ok {
				luakit.BadArgument(L, 1, "table", luakit.TypeName(L.Get(1)))
			}
			volume := optFinite(L, 2, math.NaN())
			length := audio.Len()
			if length <= 0 {
				luakit.RaiseMessage(L, "Cannot play empty audio")
			}
			if length > MaxAudioLength {
				luakit.RaiseMessage(L, "Audio data is too large")
			}
			s.mu.Lock()
			busy := s.pending
			s.mu.Unlock()
			if busy {
				L.Push(lua.LFalse)
				return 1
			}
			// Only whole bytes of eight samples are encoded, as CC's encoder takes them.
			for i := 1; i <= length/8*8; i++ {
				sample(L, audio, i)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if !s.playingAudio(a.Now()) {
				s.audioRuns, s.unplayed = true, true
			}
			s.pending = true
			if math.IsNaN(volume) {
				volume = 1
			}
			s.played = append(s.played, Sound{Kind: "audio", Volume: clampVolume(volume), Samples: length})
			a.After(tick, func() { s.send(a, length) })
			L.Push(lua.LTrue)
			return 1
		},
		"stop": func(L *lua.LState, _ *peripheral.Access) int {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.pending, s.audioRuns, s.unplayed = false, false, false
			s.clientEnd = time.Time{}
			return 0
		},
	}
}
