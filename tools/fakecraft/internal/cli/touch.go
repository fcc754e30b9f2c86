package cli

import (
	"fmt"
	"strconv"
	"strings"

	"fakecraft/ccstr"
	"fakecraft/computer"
	"fakecraft/world"
)

// touchFlags are a player's right-clicks on advanced monitors.
type touchFlags struct {
	Touch []string `sep:"none" help:"Touch the advanced monitor NAME (a side, or a cable's monitor_0 through a wired modem) at its character X,Y, as a player's right-click does: the computer gets monitor_touch. Each touch comes when the computer next waits for an event with none queued and no line wanted from standard input, in order. Repeatable." placeholder:"NAME=X,Y"`
}

// touchUsage is what a --touch must look like.
const touchUsage = "want NAME=X,Y, X and Y whole numbers from 1 (the monitor's character cells)"

// touchActs makes the --touch values the player's acts for the computer standing at place:
// each touches its monitor, whose computers get monitor_touch (monitor.Touch clamps the
// point to the monitor's size at that moment, which its text scale may have changed). A
// name that is no advanced monitor of this computer is refused before anything boots: CC
// queues no event for a basic monitor's touch, so it would be lost unseen.
func touchActs(place *world.Place, touches []string) (computer.Acts, error) {
	if len(touches) == 0 {
		return nil, nil
	}
	acts := make([]func(), 0, len(touches))
	for _, t := range touches {
		name, x, y, ok := parseTouch(t)
		if !ok {
			return nil, fmt.Errorf("--touch %s: %s", t, touchUsage)
		}
		// The name is text, as --attach's is: CC's bytes inside.
		m, err := place.Monitor(ccstr.FromText(name))
		if err != nil {
			return nil, fmt.Errorf("--touch %s: %w", t, err)
		}
		if !m.Advanced() {
			return nil, fmt.Errorf("--touch %s: %s is a basic monitor, which takes no touches (CC queues monitor_touch only for an advanced monitor)", t, name)
		}
		acts = append(acts, func() { m.Touch(x, y) })
	}
	return computer.ActsOf(acts...), nil
}

// parseTouch reads NAME=X,Y.
func parseTouch(s string) (name string, x, y int, ok bool) {
	i := strings.LastIndexByte(s, '=')
	if i <= 0 {
		return "", 0, 0, false
	}
	xs, ys, ok := strings.Cut(s[i+1:], ",")
	if !ok {
		return "", 0, 0, false
	}
	x, errX := strconv.Atoi(xs)
	y, errY := strconv.Atoi(ys)
	if errX != nil || errY != nil || x < 1 || y < 1 {
		return "", 0, 0, false
	}
	return s[:i], x, y, true
}
