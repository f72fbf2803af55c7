package linkctl

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/prm"
)

// fecModes are mlxlink's --fec names and PPLM's override bits for them
// (the PRM's PPLM fec_override_admin fields: bit k is the FEC whose
// fec_mode_active number is k). RS and LL mean the PAM4 codes (544,514)
// and (272,257+1) at PAM4 speeds, as mlxlink maps them.
var fecModes = []struct {
	name, desc string
	bit        uint64
}{
	{"AU", "auto", 0},
	{"NF", "no FEC", 1 << 0},
	{"FC", "Firecode", 1 << 1},
	{"RS", "RS-FEC (528,514)", 1 << 2},
	{"LL", "LL RS-FEC (271,257)", 1 << 3},
	{"DF-RS", "interleaved RS-FEC (544,514)", 1 << 6},
	{"RS-544", "RS-FEC (544,514)", 1 << 7},
	{"LL-272", "LL RS-FEC (272,257+1)", 1 << 9},
	{"DF-LL", "interleaved LL RS-FEC (272,257+1)", 1 << 10},
}

// pam4Group says a PPLM speed group runs PAM4 lanes (50G a lane and up).
func pam4Group(g string) bool {
	return strings.Contains(g, "x") && g != "100g_4x" && g != "50g_2x"
}

// fecBit is the override bit of an --fec name at a speed group.
func fecBit(name, group string) (uint64, bool) {
	n := strings.ToUpper(strings.TrimSpace(name))
	if pam4Group(group) {
		switch n {
		case "RS":
			n = "RS-544"
		case "LL":
			n = "LL-272"
		}
	}
	for _, m := range fecModes {
		if m.name == n {
			return m.bit, true
		}
	}
	return 0, false
}

// fecNamesOf names the FECs of a capability mask, in --fec words.
func fecNamesOf(mask uint64, group string) []string {
	out := []string{"AU"}
	for _, m := range fecModes {
		if m.bit == 0 || mask&m.bit == 0 {
			continue
		}
		n := m.name
		if pam4Group(group) && (n == "RS-544" || n == "LL-272") {
			n = n[:2]
		}
		out = append(out, n)
	}
	return out
}

// fecGroup is the PPLM group of an --fec_speed in mlxlink's words (10g,
// 40g, 25g, 50g, 100g, 50g_1x, 100g_2x, 200g_4x, 400g_4x, ...).
func fecGroup(speed string) string {
	g := strings.ToLower(strings.TrimSpace(speed))
	switch g {
	case "10g", "40g":
		return "10g_40g"
	case "50g_2x":
		return "50g"
	case "100g_4x":
		return "100g"
	}
	return g
}

// groupOfLink is the PPLM group of the speed a link runs (mlxlink's
// speedToFecSpeedStr).
func groupOfLink(speed string, lanes int) string {
	switch speed {
	case "10G", "40G":
		return "10g_40g"
	case "25G":
		return "25g"
	case "50G":
		if lanes == 1 {
			return "50g_1x"
		}
		return "50g"
	case "100G":
		if lanes == 4 {
			return "100g"
		}
	}
	return fmt.Sprintf("%sg_%dx", strings.TrimSuffix(strings.ToLower(speed), "g"), lanes)
}

// FEC plans mlxlink's --fec with --fec_speed: the FEC the port runs at a
// speed (PPLM fec_override_admin_<speed>), the speed of the link when none
// is given. The FEC must be one the port supports at that speed (PPLM
// fec_override_cap_<speed>). 25G and 50G are set together, as mlxlink
// sets them. InfiniBand ports are refused: their FEC follows the speed.
func FEC(ctx context.Context, ad *adapter.Adapter, local int, fec, speed string) (*Change, error) {
	pt, err := openPort(ctx, ad, local)
	if err != nil {
		return nil, err
	}
	if pt.ib {
		return nil, inputErr("--fec: port %d runs InfiniBand, whose FEC follows its speed; FEC overrides (PPLM) are for Ethernet ports, as in mlxlink", local)
	}
	op := pt.lnk.Operational
	up := op.OperUp != nil && *op.OperUp
	var group string
	switch {
	case speed != "":
		group = fecGroup(speed)
	case up && op.Speed != "" && op.WidthLanes != nil:
		group = groupOfLink(op.Speed, *op.WidthLanes)
	default:
		return nil, inputErr("--fec: port %d is down; say which speed the FEC is for with --fec_speed (25g, 50g, 100g, 100g_2x, 200g_4x, 400g_4x, ...)", local)
	}
	idx := pt.index("PPLM")
	cur, err := pt.read(ctx, "PPLM", idx)
	if err != nil {
		return nil, err
	}
	capf := "fec_override_cap_" + group
	capMask, ok := adapter.FieldOf(cur, "PPLM", capf)
	if !ok {
		return nil, inputErr("--fec_speed %s: not a speed PPLM configures FEC for; give one of %s", speed, strings.Join(groups(cur.Rows()), ", "))
	}
	if capMask == 0 {
		return nil, inputErr("--fec_speed %s: port %d has no FEC choice at that speed (it does not run it)", group, local)
	}
	v, ok := fecBit(fec, group)
	if !ok {
		return nil, inputErr("--fec %s: not a FEC; give one of %s", fec, strings.Join(fecNamesOf(capMask, group), ", "))
	}
	if v != 0 && v&capMask == 0 {
		return nil, inputErr("--fec %s: port %d does not support it at %s (PPLM capability 0x%x: %s)", strings.ToUpper(fec), local, group, capMask, strings.Join(fecNamesOf(capMask, group), ", "))
	}
	fields := []string{"fec_override_admin_" + group}
	if group == "25g" || group == "50g" {
		fields = []string{"fec_override_admin_25g", "fec_override_admin_50g"}
	}
	w := Write{Register: "PPLM", Index: idx, AnyValue: true}
	undo := Write{Register: "PPLM", Index: idx, AnyValue: true}
	for _, f := range fields {
		prev, _ := adapter.FieldOf(cur, "PPLM", f)
		w.Fields = append(w.Fields, Field{f, strconv.FormatUint(v, 10)})
		undo.Fields = append(undo.Fields, Field{f, strconv.FormatUint(prev, 10)})
	}
	c := pt.change(fmt.Sprintf("fec %s at %s", strings.ToUpper(fec), group))
	c.Effects = []string{"the link retrains with this FEC: it drops for a few seconds; a FEC the partner does not run keeps it down (the firmware reports a FEC mismatch)"}
	if up {
		c.expect = "up"
	}
	if err := pt.plan(ctx, c, []Write{w}); err != nil {
		return nil, err
	}
	c.Undo = []Write{undo}
	prev, _ := adapter.FieldOf(cur, "PPLM", fields[0])
	for _, m := range fecModes {
		if m.bit == prev {
			n := m.name
			if pam4Group(group) && (n == "RS-544" || n == "LL-272") {
				n = n[:2]
			}
			c.UndoFlags = "--fec " + n + " --fec_speed " + group
		}
	}
	return c, nil
}

// groups lists the speed groups of PPLM's override fields.
func groups(rows []prm.Row) []string {
	var out []string
	for _, r := range rows {
		if g, ok := strings.CutPrefix(r.Path, "fec_override_admin_"); ok {
			out = append(out, g)
		}
	}
	sort.Strings(out)
	return out
}
