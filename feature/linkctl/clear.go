package linkctl

import (
	"context"
	"fmt"
	"strconv"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/prm"
)

// Clear is one PPCNT counter group of one port to reset (clr=1): link
// --clear resets the physical-layer groups, --clear_histogram the RS-FEC
// histogram's.
type Clear struct {
	Port  int
	Group string // as the PRM numbers it, "0x12"
}

// String is the clear as the command reports it done.
func (c Clear) String() string { return fmt.Sprintf("port %d PPCNT group %s", c.Port, c.Group) }

// Write is the register write the clear makes, for --dry-run.
func (c Clear) Write() string {
	return fmt.Sprintf("PPCNT local_port=%d grp=%s clr=1", c.Port, c.Group)
}

// Clears lists the clears of groups on each port.
func Clears(ports []int, groups []string) []Clear {
	var out []Clear
	for _, p := range ports {
		for _, g := range groups {
			out = append(out, Clear{Port: p, Group: g})
		}
	}
	return out
}

// ClearCounters performs the clears in order through dev's guarded write
// (read, plan, write, read back) and returns those done; it stops at the
// first that fails. A group that is no number is an input error.
func ClearCounters(ctx context.Context, ad *adapter.Adapter, cs []Clear) ([]string, error) {
	d, err := ad.Registers(ctx)
	if err != nil {
		return nil, err
	}
	var done []string
	for _, c := range cs {
		g, err := strconv.ParseUint(c.Group, 0, 64)
		if err != nil {
			return done, inputErr("PPCNT group %q is no number", c.Group)
		}
		idx := adapter.LocalPort(c.Port).Group(g).Assignments()
		wp, err := d.PrepareSetWith(ctx, "PPCNT", idx, []prm.Assignment{{Path: "clr", Value: "1"}}, dev.SetOptions{})
		if err != nil {
			return done, err
		}
		if _, err := d.ApplySet(ctx, wp, idx); err != nil {
			return done, err
		}
		done = append(done, c.String())
	}
	return done, nil
}
