package exporter

import (
	"testing"
	"time"

	"github.com/cxray/cxray/emu/emuadapter/emutest"
)

// The link collector on the link-trouble example after ten minutes: the
// BER gauges are the model's, the degraded lane stands out, the down
// ports have no ratio but their opcode and verdict, the FEC mismatch is 1.
func TestLinkCollector(t *testing.T) {
	ads, clk := emutest.OpenFile(t, "../../examples/link-trouble.yaml")
	clk.Advance(10 * time.Minute)
	var srcs []Source
	for _, a := range ads {
		srcs = append(srcs, FromAdapter(a))
	}
	ex, err := New(srcs, Options{NoRuntimeMetrics: true, Collectors: []string{"link"}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := scrape(t, ex.Handler(), "")
	v := func(name string, labels ...string) float64 { return value(t, s, name, labels...) }
	if got := v("cxray_link_raw_ber", "device", "0000:03:00.0", "port", "1"); got != 2e-10 {
		t.Errorf("healthy raw BER %v, want 2e-10 (the firmware's 2E-10)", got)
	}
	lane2 := v("cxray_link_lane_raw_ber", "device", "0000:03:00.1", "port", "1", "lane", "2")
	lane0 := v("cxray_link_lane_raw_ber", "device", "0000:03:00.1", "port", "1", "lane", "0")
	if !(lane2 > 3.9e-5 && lane2 < 4.1e-5 && lane0 < 1e-9) {
		t.Errorf("degraded lane BER %v, lane 0 %v; want 4e-5 and 2e-10", lane2, lane0)
	}
	if got := v("cxray_link_verdicts", "device", "0000:03:00.1", "port", "1", "category", "cable or module"); got != 1 {
		t.Errorf("degraded lane verdicts %v", got)
	}
	if n := len(s.Find("cxray_link_raw_ber", "device", "0000:04:00.0")); n != 0 {
		t.Errorf("a down link has a raw BER gauge")
	}
	if got := v("cxray_link_troubleshooting_opcode", "device", "0000:04:00.0", "port", "1"); got != 2 {
		t.Errorf("no partner: opcode %v, want 2", got)
	}
	if got := v("cxray_link_fec_mismatch", "device", "0000:04:00.1", "port", "1"); got != 1 {
		t.Errorf("FEC mismatch gauge %v", got)
	}
	if got := v("cxray_link_fec_mismatch", "device", "0000:03:00.0", "port", "1"); got != 0 {
		t.Errorf("healthy FEC mismatch gauge %v", got)
	}
	if got := v("cxray_link_fec_active", "device", "0000:03:00.0", "port", "1", "fec_mode", "7"); got != 1 {
		t.Errorf("FEC active %v", got)
	}
	if got := v("cxray_scrape_collector_success", "device", "0000:03:00.0", "collector", "link"); got != 1 {
		t.Errorf("collector success %v", got)
	}
}
