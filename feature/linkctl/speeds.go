package linkctl

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/prm/regpath"
)

// PTYS proto_mask values (the PRM's PTYS table).
const (
	protoIB  = 1
	protoEth = 4
)

// ibWidths124 is ib_link_width_admin with 1x, 2x and 4x, what mlxlink
// writes with IB speeds.
const ibWidths124 = 7

// Speeds plans mlxlink's --speeds (with force, --link_mode_force): the
// speeds the port advertises in auto-negotiation, or with force the one
// speed it runs without (PTYS an_disable_admin). Each speed must be one the
// port's protocol names, that the port can run (PTYS capability) and that
// its cable carries (PDDR's cable capability, when the firmware knows
// the cable). On an InfiniBand port SDR stays enabled unless forced and
// the widths 1x, 2x and 4x are enabled, as mlxlink does.
func Speeds(ctx context.Context, ad *adapter.Adapter, local int, speeds []string, force bool) (*Change, error) {
	pt, err := openPort(ctx, ad, local)
	if err != nil {
		return nil, err
	}
	proto, what := "Ethernet", "an Ethernet"
	if pt.ib {
		proto, what = "InfiniBand", "an InfiniBand"
	}
	op := pt.lnk.Operational
	capMask, cable := op.Supported.Bits(), op.Cable.Bits()
	var given []string
	for _, s := range speeds {
		if s = strings.TrimSpace(s); s != "" {
			given = append(given, s)
		}
	}
	if force && len(given) != 1 {
		return nil, inputErr("--link_mode_force runs one speed with auto-negotiation off; give one speed in --speeds, not %d", len(given))
	}
	var mask uint64
	var names []string
	for _, s := range given {
		b, ok := link.SpeedBit(pt.ib, s)
		if !ok {
			if _, other := link.SpeedBit(!pt.ib, s); other {
				return nil, inputErr("--speeds %s: port %d runs %s, and %s is not %s speed; it can run %s", s, local, proto, s, what, strings.Join(link.SpeedNames(pt.ib, capMask), ","))
			}
			return nil, inputErr("--speeds %s: not a speed name; port %d (%s) can run %s", s, local, proto, strings.Join(link.SpeedNames(pt.ib, capMask), ","))
		}
		switch {
		case capMask&(1<<b) == 0:
			return nil, inputErr("--speeds %s: port %d cannot run it (capability %s: %s)", s, local, hexMask(capMask), strings.Join(link.SpeedNames(pt.ib, capMask), ","))
		case cable != 0 && cable&(1<<b) == 0:
			return nil, inputErr("--speeds %s: the cable in port %d cannot carry it (it carries %s)", s, local, strings.Join(link.SpeedNames(pt.ib, cable), ","))
		}
		mask |= 1 << b
		names = append(names, link.SpeedNames(pt.ib, 1<<b)...)
	}
	switch {
	case mask == 0:
		return nil, inputErr("--speeds: give one or more speeds, comma-separated; port %d can run %s", local, strings.Join(link.SpeedNames(pt.ib, capMask), ","))
	}
	pm := protoEth
	if pt.ib {
		pm = protoIB
	}
	idx := pt.index("PTYS", Field{"proto_mask", strconv.Itoa(pm)})
	cur, err := pt.read(ctx, "PTYS", idx)
	if err != nil {
		return nil, err
	}
	field := func(path string) string {
		v, _ := adapter.FieldOf(cur, "PTYS", path)
		return strconv.FormatUint(v, 10)
	}
	anDis := "0"
	if force {
		anDis = "1"
	}
	var w, undo Write
	if pt.ib {
		if !force {
			mask |= 1 // SDR, which mlxlink keeps for the link to train
		}
		widths, _ := adapter.FieldOf(cur, "PTYS", regpath.PTYSIBLinkWidthCapability)
		if widths&ibWidths124 != 0 {
			widths &= ibWidths124
		}
		w = Write{Register: "PTYS", Index: idx, Fields: []Field{{"ib_proto_admin", strconv.FormatUint(mask, 10)},
			{"ib_link_width_admin", strconv.FormatUint(widths, 10)}, {"an_disable_admin", anDis}}}
		undo = Write{Register: "PTYS", Index: idx, Fields: []Field{{"ib_proto_admin", field("ib_proto_admin")},
			{"ib_link_width_admin", field("ib_link_width_admin")}, {"an_disable_admin", field("an_disable_admin")}}}
	} else {
		w = Write{Register: "PTYS", Index: idx, Fields: []Field{{"ext_eth_proto_admin", strconv.FormatUint(mask, 10)}, {"an_disable_admin", anDis}}}
		undo = Write{Register: "PTYS", Index: idx, Fields: []Field{{"ext_eth_proto_admin", field("ext_eth_proto_admin")}, {"an_disable_admin", field("an_disable_admin")}}}
	}
	what2 := "speeds " + strings.Join(names, ",")
	if force {
		what2 += " (link_mode_force)"
	}
	c := pt.change(what2)
	c.Effects = []string{fmt.Sprintf("the link retrains at the speeds given: it drops for a few seconds; a speed the partner does not run brings it up slower, or (forced) keeps it down")}
	if op.OperUp != nil && *op.OperUp {
		c.expect = "up"
	}
	if err := pt.plan(ctx, c, []Write{w}); err != nil {
		return nil, err
	}
	c.Undo = []Write{undo}
	prevMask, _ := adapter.FieldOf(cur, "PTYS", map[bool]string{false: regpath.PTYSExtEthProtoAdmin, true: regpath.PTYSIBProtoAdmin}[pt.ib])
	if prev := link.SpeedNames(pt.ib, prevMask); len(prev) > 0 && !strings.Contains(strings.Join(prev, ","), "bit") {
		c.UndoFlags = "--speeds " + strings.Join(prev, ",")
		if field("an_disable_admin") != "0" {
			c.UndoFlags += " --link_mode_force"
		}
	}
	return c, nil
}

func hexMask(m uint64) string { return fmt.Sprintf("0x%x", m) }
