package roce_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/feature/roce"
	"github.com/cxray/cxray/feature/throughput"
	"github.com/cxray/cxray/nvconf/nvtest"
)

// roce status names the causes of a short throughput the scenario gives:
// a card trained x8, a small window for a long path, loss.
func TestStatusCauses(t *testing.T) {
	nv := nvtest.NV(t)
	for _, c := range []struct {
		name, yaml string
		rtt        time.Duration
		want       []string
	}{
		{"healthy", "devices:\n  - profile: cx7-2p400g\n", 8 * time.Microsecond, []string{}},
		{"x8", "devices:\n  - profile: cx7-2p400g\n    pcie: {width: 8}\n", 0, []string{throughput.CausePCIe}},
		{"small window", "devices:\n  - profile: cx7-2p400g\n    nv: {configured: {LOG_TX_PSN_WINDOW: 7}}\n", 100 * time.Microsecond,
			// The RDMA model (emu/rdma) retransmits too when the window
			// keeps packets waiting past the ACK timeout.
			[]string{throughput.CauseWindow, throughput.CauseErrors}},
		{"loss", "devices:\n  - profile: cx7-2p400g\n    rdma: {loss: 1e-4, rtt: 8us}\n", 0, []string{throughput.CauseErrors}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ads, _ := emutest.OpenYAML(t, c.yaml)
			r, err := roce.Status(context.Background(), ads[0], roce.StatusOptions{NV: nv, Interval: 2 * time.Second, RTT: c.rtt})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			got = []string{}
			for _, k := range r.Causes {
				got = append(got, k.Code)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("causes (-want +got):\n%s\nunjudged %v", d, r.Unjudged)
			}
			if (c.rtt == 0) != (len(r.Unjudged) == 1) {
				t.Errorf("unjudged %v with rtt %v", r.Unjudged, c.rtt)
			}
		})
	}
}
