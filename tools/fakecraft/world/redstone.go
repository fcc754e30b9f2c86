package world

import (
	"fmt"

	"fakecraft/peripheral"
)

// Port is one side of one computer, an end of a redstone Wire.
type Port struct {
	Computer int    `json:"computer"`
	Side     string `json:"side"`
}

// Wire joins two computers' sides with redstone (and bundled cable): what one outputs on
// its side is the other's input on its side, both ways, as two computers facing each
// other are in the game.
type Wire struct {
	A Port `json:"a"`
	B Port `json:"b"`
}

// Connect lays a wire between two placed computers' sides.
func (w *World) Connect(wire Wire) error {
	a, b, err := w.ends(wire, "wire")
	if err != nil {
		return err
	}
	if a == b && peripheral.SameSide(wire.A.Side, wire.B.Side) {
		return fmt.Errorf("wire: computer %d's %s cannot feed itself", a.id, wire.A.Side)
	}
	w.join(a, wire.A.Side, b, wire.B.Side)
	return nil
}

// ends are the two placed computers whose sides wire joins (what names the join in
// errors: "wire", "touching"); a pocket computer has no sides to join.
func (w *World) ends(wire Wire, what string) (*Place, *Place, error) {
	a, b := w.At(wire.A.Computer), w.At(wire.B.Computer)
	for _, end := range []struct {
		p    *Place
		port Port
	}{{a, wire.A}, {b, wire.B}} {
		if end.p == nil {
			return nil, nil, fmt.Errorf("%s: computer %d is not in the world", what, end.port.Computer)
		}
		if !peripheral.IsSide(end.port.Side) {
			return nil, nil, fmt.Errorf("%s: %q is not a side", what, end.port.Side)
		}
	}
	for _, end := range []*Place{a, b} {
		if end.Pocket() != nil {
			return nil, nil, fmt.Errorf("%s: computer %d is a pocket computer, which has no redstone sides", what, end.id)
		}
	}
	return a, b, nil
}

// join passes each computer's redstone output on its side to the other's input on its side.
func (w *World) join(a *Place, aSide string, b *Place, bSide string) {
	for _, end := range []*Place{a, b} {
		end.mu.Lock()
		end.wired = true
		end.mu.Unlock()
	}
	feed(a, aSide, b, bSide)
	feed(b, bSide, a, aSide)
}

// feed passes from's output on fromSide to to's input on toSide, now and on every change.
func feed(from *Place, fromSide string, to *Place, toSide string) {
	from.bus.OnOutput(func(side string, strength, bundled int) {
		if peripheral.SameSide(side, fromSide) {
			// Both are sides (Connect checked), so this cannot fail.
			_ = to.bus.SetInput(toSide, strength, bundled)
		}
	})
	strength, bundled, _ := from.bus.Output(fromSide)
	_ = to.bus.SetInput(toSide, strength, bundled)
}
