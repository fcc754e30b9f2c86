package world

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"fakecraft/peripheral"
	"fakecraft/peripheral/modem"
)

// Kind is one type of peripheral a world can make: how its arguments read, and the maker.
type Kind struct {
	// Args describes the arguments after TYPE, for usage messages ("" when it takes none).
	Args string
	// Help says what it is.
	Help string
	// make builds one for the computer at p (nil for a cable's peripheral) from the
	// arguments (the spec's parts after TYPE).
	make func(w *World, p *Place, args []string) (peripheral.Peripheral, error)
}

// Kinds are the peripherals a world makes, by type name: the names periphemu.create,
// --attach and world files take, and periphemu.names lists. One line each.
var Kinds = map[string]Kind{
	"modem": {Args: "[NETWORK]", Help: "wireless modem; a number joins that separate network (CraftOS-PC's modem networks) instead of the world's air",
		make: makeModem(modem.Wireless)},
	"ender_modem": {Args: "[NETWORK]", Help: "ender modem: wireless without a range limit",
		make: makeModem(modem.Ender)},
	"wired_modem": {Args: "CABLE", Help: "wired modem on the named cable (reaches the other wired modems and the cable's peripherals)",
		make: makeWiredModem},
}

// KindNames lists the kinds, sorted.
func KindNames() []string {
	names := make([]string, 0, len(Kinds))
	for n := range Kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// make builds a peripheral from spec, TYPE[:ARG...], for the computer at p.
func (w *World) make(p *Place, spec string) (peripheral.Peripheral, error) {
	parts := strings.Split(spec, ":")
	kind, ok := Kinds[parts[0]]
	if !ok {
		return nil, fmt.Errorf("No peripheral named %s (one of %s)", parts[0], strings.Join(KindNames(), ", "))
	}
	per, err := kind.make(w, p, parts[1:])
	if err != nil {
		usage := parts[0]
		if kind.Args != "" {
			usage += ":" + strings.ReplaceAll(kind.Args, " ", ":")
		}
		return nil, fmt.Errorf("%s: %w (want %s)", spec, err, usage)
	}
	return per, nil
}

// position is where a peripheral of the computer at p stands (a cable's stand nowhere in
// particular).
func position(p *Place) Vec {
	if p == nil {
		return Vec{}
	}
	return p.pos
}

func makeModem(k modem.Kind) func(w *World, p *Place, args []string) (peripheral.Peripheral, error) {
	return func(w *World, p *Place, args []string) (peripheral.Peripheral, error) {
		network := 0
		switch len(args) {
		case 0:
		case 1:
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("network %q is not a number", args[0])
			}
			network = n
		default:
			return nil, fmt.Errorf("too many arguments")
		}
		return modem.New(k, w.Air(network), position(p)), nil
	}
}

func makeWiredModem(w *World, p *Place, args []string) (peripheral.Peripheral, error) {
	if len(args) != 1 || args[0] == "" {
		return nil, fmt.Errorf("name the cable")
	}
	return modem.New(modem.Wired, w.Cable(args[0]), position(p)), nil
}
