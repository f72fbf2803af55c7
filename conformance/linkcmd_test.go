package conformance

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// linkPorts are the emulated ports of testdata/link.yaml (the same as
// examples/link-trouble.yaml) and what each one is.
var linkPorts = []struct{ bdf, what string }{
	{"0000:03:00.0", "healthy"},
	{"0000:03:00.1", "degraded lane"},
	{"0000:04:00.0", "down, no partner"},
	{"0000:04:00.1", "down, FEC mismatch"},
	{"0000:05:00.0", "speed mismatch"},
}

// cxrayLink is the part of `cxray link -o json` compared here.
type cxrayLink struct {
	Links []struct {
		Operational struct {
			State         string `json:"state"`
			PhysicalState string `json:"physical_state"`
			Speed         string `json:"speed"`
			WidthLanes    *int   `json:"width_lanes"`
		} `json:"operational"`
		FEC *struct {
			Active string `json:"active"`
		} `json:"fec"`
		Troubleshooting *struct {
			StatusOpcode *uint64 `json:"status_opcode"`
			Message      string  `json:"message"`
		} `json:"troubleshooting"`
		Counters *struct {
			TimeSinceClearMS *uint64 `json:"time_since_clear_ms"`
			EffectiveErrors  *uint64 `json:"effective_errors_bits"`
			RawBER           struct {
				Value    *float64 `json:"value"`
				Firmware string   `json:"firmware"`
			} `json:"raw_ber"`
			EffectiveBER struct {
				Value    *float64 `json:"value"`
				Firmware string   `json:"firmware"`
			} `json:"effective_ber"`
			Lanes []struct {
				RawErrors *uint64 `json:"raw_errors_bits"`
			} `json:"lanes"`
		} `json:"counters"`
		Verdicts []struct {
			Code     string `json:"code"`
			Category string `json:"category"`
		} `json:"verdicts"`
	} `json:"links"`
}

// TestLinkVsMstlink: `cxray link` and `mstlink` / `mstlink -c` agree on
// the same emulated ports (a healthy one, a degraded lane, two down ports
// and a slow one): state, physical state, speed, width, FEC, the
// troubleshooting status opcode and message, the raw and effective BER
// (the firmware's coefficient and magnitude, which both print), the
// errors per lane and the time since clear. The manual clock is advanced
// first, so the counters have counted; it does not move between the tools.
func TestLinkVsMstlink(t *testing.T) {
	need(t, "mstlink")
	if !hasCommand(t, "link") {
		t.Fatal("cxray has no link command")
	}
	var script strings.Builder
	script.WriteString(`cxray emu ctl --socket "$SOCK" advance 10m >/dev/null` + "\n")
	for i, p := range linkPorts {
		fmt.Fprintf(&script, "run plain%d mstlink -d %s --json\n", i, p.bdf)
		fmt.Fprintf(&script, "run counters%d mstlink -d %s -c --json\n", i, p.bdf)
		fmt.Fprintf(&script, "run cxray%d cxray link -d %s -o json\n", i, p.bdf)
		fmt.Fprintf(&script, "run text%d cxray link -d %s --counters\n", i, p.bdf)
	}
	s := emuServe(t, "link.yaml", script.String(), 4*time.Minute)
	wantVerdict := map[string]string{"healthy": "", "degraded lane": "lane_degraded", "down, no partner": "link_down",
		"down, FEC mismatch": "fec_mismatch", "speed mismatch": "speed_mismatch"}
	for i, p := range linkPorts {
		t.Run(p.what, func(t *testing.T) {
			plain := mstlinkOut(t, s.ok(t, fmt.Sprintf("plain%d", i)))
			withC := mstlinkOut(t, s.ok(t, fmt.Sprintf("counters%d", i)))
			st := s.step(t, fmt.Sprintf("cxray%d", i))
			var doc cxrayLink
			if err := json.Unmarshal([]byte(st.stdout), &doc); err != nil || len(doc.Links) != 1 {
				t.Fatalf("cxray link -o json: %v\n%s", err, st)
			}
			l := doc.Links[0]
			text := s.step(t, fmt.Sprintf("text%d", i))
			if text.rc != st.rc {
				t.Errorf("exit %d in table mode, %d in JSON mode", text.rc, st.rc)
			}
			// Verdicts and exit status.
			want := wantVerdict[p.what]
			var codes []string
			for _, v := range l.Verdicts {
				codes = append(codes, v.Code)
			}
			switch {
			case want == "" && (len(codes) > 0 || st.rc != 0):
				t.Errorf("healthy port: verdicts %v, exit %d; want none and 0", codes, st.rc)
			case want != "" && (st.rc != 1 || !contains(codes, want)):
				t.Errorf("verdicts %v, exit %d; want %s and exit 1", codes, st.rc, want)
			}
			op := "Operational Info"
			for _, out := range []MstlinkOutput{plain, withC} {
				cmpLabel(t, out, op, "State", l.Operational.State)
				cmpLabel(t, out, op, "Physical state", l.Operational.PhysicalState)
				speed, width, fec := "N/A", "N/A", "N/A"
				if l.Operational.Speed != "" {
					speed = l.Operational.Speed
				}
				if l.Operational.WidthLanes != nil {
					width = fmt.Sprintf("%dx", *l.Operational.WidthLanes)
				}
				if l.FEC != nil && l.FEC.Active != "" {
					fec = l.FEC.Active
				}
				cmpLabel(t, out, op, "Speed", speed)
				cmpLabel(t, out, op, "Width", width)
				cmpLabel(t, out, op, "FEC", fec)
				tr := "Troubleshooting Info"
				if l.Troubleshooting == nil || l.Troubleshooting.StatusOpcode == nil {
					t.Fatal("cxray link read no troubleshooting status")
				}
				cmpLabel(t, out, tr, "Status Opcode", strconv.FormatUint(*l.Troubleshooting.StatusOpcode, 10))
				cmpLabel(t, out, tr, "Recommendation", l.Troubleshooting.Message)
			}
			c := l.Counters
			if c == nil || c.TimeSinceClearMS == nil {
				t.Fatal("cxray link read no counters")
			}
			ber := "Physical Counters and BER Info"
			if l.Operational.State != "Active" {
				// A down link: mstlink prints no counters, cxray no ratios.
				for _, label := range []string{"Time Since Last Clear [Min]", "Raw Physical BER", "Effective Physical BER", "Raw Physical Errors Per Lane", "Effective Physical Errors"} {
					cmpLabel(t, withC, ber, label, "N/A")
				}
				if c.RawBER.Value != nil || c.EffectiveBER.Value != nil {
					t.Errorf("down link: cxray gives a raw BER %v, effective %v; want n/a", *c.RawBER.Value, c.EffectiveBER.Value)
				}
				return
			}
			cmpLabel(t, withC, ber, "Time Since Last Clear [Min]", fmt.Sprintf("%.1f", float64(*c.TimeSinceClearMS)/60000))
			cmpLabel(t, withC, ber, "Raw Physical BER", c.RawBER.Firmware)
			cmpLabel(t, withC, ber, "Effective Physical BER", c.EffectiveBER.Firmware)
			var lanes []string
			for _, ln := range c.Lanes {
				lanes = append(lanes, strconv.FormatUint(*ln.RawErrors, 10))
			}
			v := withC[ber]["Raw Physical Errors Per Lane"]
			got := v.Text
			if len(v.Values) > 0 {
				got = strings.Join(v.Values, ",")
			}
			if got != strings.Join(lanes, ",") {
				t.Errorf("raw errors per lane: mstlink %q, cxray %q", got, strings.Join(lanes, ","))
			}
			// mstlink 4.21 prints the effective errors as a number, or as
			// "N/A_<n>" for some FEC modes: compare the number either way.
			eff := strings.TrimPrefix(withC[ber]["Effective Physical Errors"].Text, "N/A_")
			if c.EffectiveErrors == nil || eff != strconv.FormatUint(*c.EffectiveErrors, 10) {
				t.Errorf("effective errors: mstlink %q, cxray %v", withC[ber]["Effective Physical Errors"].Text, ptrString(c.EffectiveErrors))
			}
			if t.Failed() {
				t.Logf("mstlink -c:\n%s\ncxray link:\n%s", s.ok(t, fmt.Sprintf("counters%d", i)).stdout, text.stdout)
			}
		})
	}
}

func mstlinkOut(t *testing.T, st step) MstlinkOutput {
	t.Helper()
	out, err := ParseMstlinkJSON([]byte(st.stdout))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func cmpLabel(t *testing.T, out MstlinkOutput, section, label, want string) {
	t.Helper()
	v, ok := out[section][label]
	got := v.Text
	if len(v.Values) > 0 { // a list: per-lane values
		got = strings.Join(v.Values, ",")
	}
	switch {
	case !ok:
		t.Errorf("mstlink printed no %s %q", section, label)
	case got != want:
		t.Errorf("%s %q: mstlink %q, cxray link %q", section, label, got, want)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func ptrString(p *uint64) string {
	if p == nil {
		return "none"
	}
	return strconv.FormatUint(*p, 10)
}
