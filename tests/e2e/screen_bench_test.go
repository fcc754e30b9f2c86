package e2e

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"fakecraft/computer/machine"
	"fakecraft/fakecrafttest"

	"tests/internal/repo"
)

// benchFrames is how many times the benchmark's program redraws the whole screen per run.
const benchFrames = 200

// benchScreenProgram redraws the whole 51x19 screen benchFrames times through term, with the
// daemon's mirror installed ("mirror") or not ("bare"); "sizes" then prints the size of a
// whole screen.update frame and of a one-row one, as they cross the wire (text as written and
// text of bytes 0x80-0xFF, which the byte rule escapes).
const benchScreenProgram = `
local mode, frames = ...;
frames = tonumber(frames);
local lib = require('/apis/libsandboxscreen');
local codec = require('/apis/libsandboxcodec');
local screen;
if mode ~= "bare" then
  screen = lib.newScreen({ term = term.native(), os = os, keys = keys, allowed = function() return true; end });
  screen.start();
end
local w, h = term.getSize();
local function draw(line)
  for y = 1, h do
    term.setCursorPos(1, y);
    term.write(line);
  end
end
local line = string.rep("x", w);
for _ = 1, frames do draw(line); end
if mode == "sizes" then
  local function size(frame)
    frame.watchId, frame.seq = codec.newUuid(), 1;
    return #codec.encodeFrame({ event = "computer_request", traposSenderId = "0:", messageId = codec.newUuid(),
      type = "screen.update", payload = frame });
  end
  local whole, v = screen.mirror.changesSince(nil);
  term.setCursorPos(1, 1);
  term.write(line);
  local row = screen.mirror.changesSince(v);
  local high = {};
  for i = 1, w do high[i] = string.char(0x80 + (i * 7) % 128); end
  draw(table.concat(high));
  local wholeHigh = screen.mirror.changesSince(nil);
  print(("bench: whole=%d row=%d wholeHigh=%d"):format(size(whole), size(row), size(wholeHigh)));
  screen.stop();
end
`

var benchSizes = regexp.MustCompile(`bench: whole=(\d+) row=(\d+) wholeHigh=(\d+)`)

// BenchmarkScreenMirror is the cost of the daemon's screen mirror while nobody watches: the
// same program redrawing the whole screen, without and with the mirror (the difference
// divided by benchFrames is the mirror's cost per whole-screen redraw, 19 writes), and
// ("sizes") the bytes of a screen.update. go test -run x -bench ScreenMirror ./e2e (from tests/).
func BenchmarkScreenMirror(b *testing.B) {
	root, err := repo.Root()
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"bare", "mirror", "sizes"} {
		b.Run(mode, func(b *testing.B) {
			opts := machine.Options{
				Root:    filepath.Join(root, "trapos"),
				Program: "/bench.lua",
				Args:    []string{mode, strconv.Itoa(benchFrames)},
				Files:   map[string]string{"/bench.lua": benchScreenProgram},
			}
			var out string
			for b.Loop() {
				r, o := fakecrafttest.Run(context.Background(), b, opts)
				if r.Err != nil || !r.OK {
					b.Fatalf("the benchmark program failed: %v\n%s", r.Err, o)
				}
				out = o
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchFrames, "ns/redraw")
			if mode == "sizes" {
				m := benchSizes.FindStringSubmatch(out)
				if m == nil {
					b.Fatalf("no sizes printed:\n%s", out)
				}
				for i, unit := range []string{"B/whole-frame", "B/row-update", "B/whole-frame-0x80-0xFF"} {
					n, _ := strconv.Atoi(m[i+1])
					b.ReportMetric(float64(n), unit)
				}
			}
		})
	}
}
