package linkflap

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"
)

// WriteText prints the evidence as a section under the port's link.
func WriteText(w io.Writer, ev *Evidence) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(label, v string) { fmt.Fprintf(tw, "  %s\t%s\n", label, v) }
	fmt.Fprintln(tw, "Link down (PDDR link-down page)")
	switch {
	case ev.Recorded:
		row("Last reason (local)", ev.LocalReason)
		row("Blame", orUnknown(ev.Blame))
		if ev.RemoteReason != "" {
			row("Remote reason", ev.RemoteReason)
		}
		if ev.E2EReason != "" {
			row("End-to-end reason", ev.E2EReason)
		}
	case len(ev.Unavailable) == 0:
		row("Last reason (local)", "none recorded")
	}
	if ev.LinkDowns != nil {
		row("Link downs since clear", strconv.FormatUint(*ev.LinkDowns, 10))
	} else {
		row("Link downs since clear", "n/a")
	}
	if ev.SinceClearMS != nil {
		row("Time since clear", (time.Duration(*ev.SinceClearMS) * time.Millisecond).String())
	}
	if ev.PerHour != nil {
		row("Link downs per hour", strconv.FormatFloat(*ev.PerHour, 'g', 3, 64))
	}
	for _, u := range ev.Unavailable {
		row("n/a: "+u.What, u.Why)
	}
	for _, f := range ev.DatabaseFindings {
		row("database", f)
	}
	tw.Flush()
}
