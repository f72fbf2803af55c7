package fechist

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText prints the histogram, one row per bin.
func WriteText(w io.Writer, h *Histogram) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if !h.Active {
		fmt.Fprintf(tw, "Port %d: no RS-FEC histogram (the link is down or runs no RS-FEC: PPHCR active_hist_type 0)\n", h.Port)
		tw.Flush()
		return
	}
	fmt.Fprintf(tw, "Port %d RS-FEC histogram, %s (PPHCR, PPCNT group %s), %d codewords\n", h.Port, h.Type, Group, h.Codewords)
	for i, b := range h.Bins {
		n := "n/a"
		if b.Count != nil {
			n = fmt.Sprint(*b.Count)
		}
		fmt.Fprintf(tw, "  Bin %d\t[%d:%d]\t%s\n", i, b.Low, b.High, n)
	}
	tw.Flush()
}
