package scenario_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
)

func TestLinkKey(t *testing.T) {
	sc, err := scenario.Parse([]byte(`devices:
  - ports:
      - port: 2
        link:
          raw_ber: 1e-9
          lane_ber: [0, 0, 3e-5, 0]
          effective_ber: 1e-13
          partner_protocols: [caui4]
          partner_fec: rs528
`), "link.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := fw.LinkSpec{RawBER: 1e-9, LaneBER: []float64{0, 0, 3e-5, 0}, EffectiveBER: 1e-13, PartnerProtocols: []string{"CAUI-4"}, PartnerFEC: "rs528"}
	if d := cmp.Diff(want, sc.Devices[0].Spec.Ports[1].Link); d != "" {
		t.Errorf("port 2 link (-want +got):\n%s", d)
	}
	if d := cmp.Diff(fw.LinkSpec{}, sc.Devices[0].Spec.Ports[0].Link); d != "" {
		t.Errorf("port 1 link is not the default (-want +got):\n%s", d)
	}
	for _, bad := range []struct{ yaml, says string }{
		{"raw_ber: 0.7", "raw_ber"},
		{"raw_ber: -1e-9", "raw_ber"},
		{"lane_ber: [0, 0, 0, 0, 0, 0, 0, 0, 0]", "lane_ber"},
		{"lane_ber: [0, 0, 0, 0, 0, 0, 0, 1e-9]", "lane"}, // 8 entries on a 4-lane port
		{"partner_fec: rs999", "partner_fec"},
		{"partner_protocols: [800GAUI-8]", "partner_protocols"},
		{"colour: blue", "colour"},
	} {
		_, err := scenario.Parse([]byte("devices:\n  - ports:\n      - port: 1\n        link: {"+strings.ReplaceAll(bad.yaml, ": ", ": ")+"}\n"), "bad.yaml")
		if err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("link {%s}: error %v, want one naming %s", bad.yaml, err, bad.says)
		}
	}
}

// FuzzLinkKey: whatever numbers and names the link key gets, the parser
// either refuses with a message or accepts a spec that validates and
// holds exactly the numbers given.
func FuzzLinkKey(f *testing.F) {
	f.Add(1e-9, 3e-5, 0.0, "rs544", "CAUI-4", 4)
	f.Add(0.6, -1.0, 1e-300, "none", "nonsense", 9)
	f.Fuzz(func(t *testing.T, raw, lane, eff float64, fec, proto string, n int) {
		if n < 0 || n > 12 || len(fec) > 20 || len(proto) > 20 || strings.ContainsAny(fec+proto, "\n\r\t{}[],:#&*!|>'\"%@`") {
			return
		}
		lanes := make([]string, n)
		for i := range lanes {
			lanes[i] = "0"
		}
		if n > 0 {
			lanes[n-1] = fmt.Sprint(lane)
		}
		doc := fmt.Sprintf("devices:\n  - ports:\n      - port: 1\n        link: {raw_ber: %v, effective_ber: %v, lane_ber: [%s], partner_fec: %q, partner_protocols: [%q]}\n",
			raw, eff, strings.Join(lanes, ", "), fec, proto)
		sc, err := scenario.Parse([]byte(doc), "fuzz.yaml")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		l := sc.Devices[0].Spec.Ports[0].Link
		if err := l.Validate(sc.Devices[0].Spec.Ports[0].Lanes); err != nil {
			t.Fatalf("accepted an invalid link %+v: %v", l, err)
		}
		if l.RawBER != raw || l.EffectiveBER != eff || len(l.LaneBER) != n || (n > 0 && l.LaneBER[n-1] != lane) {
			t.Fatalf("link %+v does not hold raw %v eff %v lane %v x%d", l, raw, eff, lane, n)
		}
	})
}
