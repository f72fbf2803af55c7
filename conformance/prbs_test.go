package conformance

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPRBSFromMstlink: a PRBS test that mstlink starts (it takes the port
// down and writes PPTT and PPRT) is what cxray link --test_mode MEAS
// reads: mstlink's patterns, every lane locked, and the lane the scenario
// degrades named, while the device's clock moves during the measurement
// (emu ctl advance). mstlink's own --test_mode DS is refused against the
// emulator (docs/link.md says why), so cxray stops the test.
func TestPRBSFromMstlink(t *testing.T) {
	need(t, "mstlink")
	script := `run en mstlink -d 03:00.1 --test_mode EN --tx_prbs PRBS15 --rx_prbs PRBS15 --tx_rate 400G_8X --rx_rate 400G_8X --invert_tx_polarity --invert_rx_polarity
(sleep 2; cxray emu ctl --socket "$SOCK" advance 10s >/dev/null) &
run meas cxray link -d 0000:03:00.1 --test_mode MEAS --duration 5s -o json
wait
run ds cxray link -d 0000:03:00.1 --test_mode DS --yes
run en2 cxray link -d 0000:03:00.1 --test_mode EN --tx_prbs PRBS31 --yes
run ds2 mstlink -d 03:00.1 --test_mode DS
run after cxray link -d 0000:03:00.1 --test_mode MEAS --duration 1s
run state cxray link -d 0000:03:00.1 -o json
`
	s := emuServe(t, "link.yaml", script, 3*time.Minute)
	if r := s.step(t, "en"); r.rc != 0 {
		t.Fatalf("mstlink --test_mode EN: exit %d\n%s", r.rc, r)
	}
	r := s.step(t, "meas")
	if r.rc != 1 {
		t.Errorf("MEAS on the port whose lane 2 is degraded: exit %d, want 1\n%s", r.rc, r)
	}
	var doc struct {
		Tx     string `json:"tx_prbs"`
		Rx     string `json:"rx_prbs"`
		TxRate string `json:"tx_rate"`
		RxRate string `json:"rx_rate"`
		TxInv  bool   `json:"tx_inverted"`
		RxInv  bool   `json:"rx_inverted"`
		Lanes  []struct {
			Lane    int     `json:"lane"`
			Locked  bool    `json:"locked"`
			Bits    uint64  `json:"bits"`
			BER     float64 `json:"ber"`
			Verdict string  `json:"verdict"`
		} `json:"lanes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	if doc.Tx != "PRBS15" || doc.Rx != "PRBS15" {
		t.Errorf("patterns %s/%s, want mstlink's PRBS15/PRBS15", doc.Tx, doc.Rx)
	}
	// mstlink's 400G_8X is eight 53.125 Gb/s lanes: the PRM's HDR rate,
	// the number cxray's --tx_rate 400G_8X writes too.
	if doc.TxRate != "HDR" || doc.RxRate != "HDR" {
		t.Errorf("lane rates %s/%s, want HDR/HDR for mstlink's 400G_8X", doc.TxRate, doc.RxRate)
	}
	// mstlink's --invert_*_polarity set PPTT/PPRT p, which cxray reads.
	if !doc.TxInv || !doc.RxInv {
		t.Errorf("polarity inverted %v/%v, want both as mstlink set them", doc.TxInv, doc.RxInv)
	}
	var got []string
	for _, l := range doc.Lanes {
		got = append(got, l.Verdict)
		if !l.Locked || l.Bits == 0 {
			t.Errorf("lane %d: locked %v over %d bits", l.Lane, l.Locked, l.Bits)
		}
	}
	if d := cmp.Diff([]string{"ok", "ok", "degraded", "ok"}, got); d != "" {
		t.Errorf("verdicts (-want +got):\n%s", d)
	}
	if r := s.step(t, "ds"); r.rc != 0 {
		t.Errorf("cxray --test_mode DS: exit %d\n%s", r.rc, r)
	}
	// The other way round: cxray starts the test, mstlink stops it (its DS
	// reads PPAOS's test mode and ends it there, then bounces the port).
	if r := s.step(t, "en2"); r.rc != 0 {
		t.Fatalf("cxray --test_mode EN: exit %d\n%s", r.rc, r)
	}
	if r := s.step(t, "ds2"); r.rc != 0 || strings.Contains(r.stdout, "Errors") {
		t.Errorf("mstlink --test_mode DS after cxray's EN: exit %d\n%s", r.rc, r)
	}
	if r := s.step(t, "after"); r.rc != 2 || !strings.Contains(r.stderr, "not in PRBS test mode") {
		t.Errorf("cxray MEAS after mstlink's DS: exit %d, want 2 (not in test mode)\n%s", r.rc, r)
	}
	var st struct {
		Links []struct {
			Operational struct {
				OperUp *bool `json:"oper_up"`
			} `json:"operational"`
		} `json:"links"`
	}
	if r := s.step(t, "state"); json.Unmarshal([]byte(r.stdout), &st) != nil || len(st.Links) != 1 || st.Links[0].Operational.OperUp == nil || !*st.Links[0].Operational.OperUp {
		t.Errorf("the port after mstlink's DS is not up again\n%s", r)
	}
}
