package linkctl

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/prm/regpath"
)

// loopbacks are mlxlink's --loopback names and PPLR's lb_en bits (the
// PRM's PPLR table), with what each does to the link.
var loopbacks = []struct {
	name   string
	bit    uint64
	effect string
	expect string
}{
	{"NO", 0, "the port leaves loopback: the link trains with its partner again", ""},
	{"RM", 1, "PHY remote loopback: what the partner sends is looped back at this port's PHY; this host receives nothing through the port", ""},
	{"PH", 2, "PHY local loopback: the transmitter is turned off and the port's own traffic looped back inside the PHY; the partner loses the link, the port comes up by itself (it tests the host side without cable or partner)", "up"},
	{"EX", 4, "external loopback: the port links with itself through a loopback plug in the cage; with a normal cable the partner loses the link", "up"},
	{"LL", 0x80, "link-layer local loopback: the port's egress link-layer traffic is looped back; the physical port is down", ""},
}

func loopbackNamesOf(mask uint64) []string {
	out := []string{"NO"}
	for _, l := range loopbacks {
		if l.bit != 0 && mask&l.bit != 0 {
			out = append(out, l.name)
		}
	}
	return out
}

// Loopback plans mlxlink's --loopback: NO, RM (PHY remote), PH (PHY local),
// EX (external) or LL (link layer), one of those PPLR's lb_cap lists.
func Loopback(ctx context.Context, ad *adapter.Adapter, local int, mode string) (*Change, error) {
	n := strings.ToUpper(strings.TrimSpace(mode))
	k := -1
	for i, l := range loopbacks {
		if l.name == n {
			k = i
		}
	}
	if k < 0 {
		return nil, inputErr("--loopback %q: give NO, RM (PHY remote), PH (PHY local), EX (external) or LL (link layer)", mode)
	}
	pt, err := openPort(ctx, ad, local)
	if err != nil {
		return nil, err
	}
	idx := pt.index("PPLR")
	cur, err := pt.read(ctx, "PPLR", idx)
	if err != nil {
		return nil, err
	}
	capMask, _ := adapter.FieldOf(cur, "PPLR", regpath.PPLRLbCap)
	prev, _ := adapter.FieldOf(cur, "PPLR", regpath.PPLRLbEn)
	l := loopbacks[k]
	if l.bit != 0 && capMask&l.bit == 0 {
		return nil, inputErr("--loopback %s: port %d does not support it (PPLR lb_cap 0x%x: %s)", n, local, capMask, strings.Join(loopbackNamesOf(capMask), ", "))
	}
	c := pt.change("loopback " + n)
	c.Effects = []string{l.effect}
	c.expect = l.expect
	if l.bit == 0 && prev != 0 && pt.lnk.Operational.OperUp != nil && !*pt.lnk.Operational.OperUp {
		c.expect = ""
	}
	w := Write{Register: "PPLR", Index: idx, Fields: []Field{{"lb_en", strconv.FormatUint(l.bit, 10)}}, AnyValue: true}
	if err := pt.plan(ctx, c, []Write{w}); err != nil {
		return nil, err
	}
	c.Undo = []Write{{Register: "PPLR", Index: idx, Fields: []Field{{"lb_en", strconv.FormatUint(prev, 10)}}, AnyValue: true}}
	for _, x := range loopbacks {
		if x.bit == prev {
			c.UndoFlags = fmt.Sprintf("--loopback %s", x.name)
		}
	}
	return c, nil
}
