package conformance

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// cxrayLinkState is the part of `cxray link -o json` a change is checked by.
type cxrayLinkState struct {
	Links []struct {
		Operational struct {
			State       string `json:"state"`
			AdminStatus string `json:"admin_status"`
			OperStatus  string `json:"oper_status"`
		} `json:"operational"`
	} `json:"links"`
}

// TestPortStateVsMstlink: a port state set by `cxray link --port_state`
// is what mstlink reads, and one set by `mstlink --port_state` is what
// cxray link reads, on an Ethernet and an InfiniBand port; toggles by
// either tool leave the link Active.
func TestPortStateVsMstlink(t *testing.T) {
	need(t, "mstlink")
	for _, sc := range []struct{ file, bdf, what string }{
		{"link.yaml", "0000:03:00.0", "Ethernet"},
		{"ib.yaml", "0000:18:00.0", "InfiniBand"},
	} {
		t.Run(sc.what, func(t *testing.T) {
			b := sc.bdf
			script := strings.Join([]string{
				"run cdn cxray link -d " + b + " --port_state DN --yes",
				"run m1 mstlink -d " + b + " --json",
				"run mup mstlink -d " + b + " --port_state UP",
				"run c1 cxray link -d " + b + " -o json",
				"run mdn mstlink -d " + b + " --port_state DN",
				"run c2 cxray link -d " + b + " -o json",
				"run cup cxray link -d " + b + " --port_state UP --yes -o json",
				"run m2 mstlink -d " + b + " --json",
				"run mtg mstlink -d " + b + " --port_state TG",
				"run c3 cxray link -d " + b + " -o json",
				"run ctg cxray link -d " + b + " --port_state TG --yes",
				"run m3 mstlink -d " + b + " --json",
			}, "\n") + "\n"
			s := emuRun(t, sc.file, script, 4*time.Minute)
			for _, n := range []string{"cdn", "mup", "mdn", "cup", "mtg", "ctg"} {
				st := s.ok(t, n)
				if strings.Contains(st.stdout+st.stderr, "exception") {
					t.Errorf("%s: %s", n, st)
				}
			}
			read := func(name string) (state, admin, oper string) {
				var d cxrayLinkState
				st := s.step(t, name)
				if err := json.Unmarshal([]byte(st.stdout), &d); err != nil || len(d.Links) != 1 {
					t.Fatalf("%s: %v\n%s", name, err, st)
				}
				op := d.Links[0].Operational
				return op.State, op.AdminStatus, op.OperStatus
			}
			for _, c := range []struct {
				name, state, admin string
			}{{"c1", "Active", "up"}, {"c2", "Disable", "down_by_configuration"}, {"c3", "Active", "up"}} {
				state, admin, _ := read(c.name)
				if got, want := fmt.Sprintf("%s %s", state, admin), fmt.Sprintf("%s %s", c.state, c.admin); got != want {
					t.Errorf("%s: cxray link reads state, admin %q after mstlink's change; want %q", c.name, got, want)
				}
			}
			for _, m := range []struct{ name, state string }{{"m1", "Disable"}, {"m2", "Active"}, {"m3", "Active"}} {
				cmpLabel(t, mstlinkOut(t, s.ok(t, m.name)), "Operational Info", "State", m.state)
			}
		})
	}
}

// cxrayLinkSpeeds is the part of `cxray link -o json` --speeds is checked by.
type cxrayLinkSpeeds struct {
	Links []struct {
		Operational struct {
			State           string `json:"state"`
			Speed           string `json:"speed"`
			AutoNegotiation string `json:"auto_negotiation"`
			Enabled         *struct {
				Mask string `json:"mask"`
			} `json:"enabled_speeds"`
		} `json:"operational"`
	} `json:"links"`
}

// TestSpeedsVsMstlink: speeds set by `cxray link --speeds` are what
// mstlink reads (enabled speeds, the speed the link runs, AN), and speeds
// set by `mstlink --speeds` (forced, on Ethernet) are what cxray link
// reads, on an Ethernet and an InfiniBand port.
func TestSpeedsVsMstlink(t *testing.T) {
	need(t, "mstlink")
	for _, sc := range []struct {
		file, bdf, what       string
		cxray, mstlink        string // the flags of each tool's change
		cxrayMask, mstMask    string // the enabled masks each leaves
		cxraySpeed, mstSpeed  string
		enabledLabel, mstForc string
	}{
		{"link.yaml", "0000:03:00.0", "Ethernet", "--speeds 200G_2X,100G_1X", "--speeds 100G_2X --link_mode_force",
			"0x2800", "0x400", "200G", "100G", "Enabled Link Speed (Ext.)", "FORCE"},
		{"ib.yaml", "0000:18:00.0", "InfiniBand", "--speeds HDR", "--speeds NDR",
			"0x41", "0x81", "IB-HDR", "IB-NDR", "Enabled Link Speed", "ON"},
	} {
		t.Run(sc.what, func(t *testing.T) {
			b := sc.bdf
			script := strings.Join([]string{
				"run cx cxray link -d " + b + " " + sc.cxray + " --yes",
				"run m1 mstlink -d " + b + " --json",
				"run c1 cxray link -d " + b + " -o json",
				"run ms mstlink -d " + b + " " + sc.mstlink,
				"run c2 cxray link -d " + b + " -o json",
				"run m2 mstlink -d " + b + " --json",
			}, "\n") + "\n"
			s := emuRun(t, sc.file, script, 4*time.Minute)
			for _, n := range []string{"cx", "ms"} {
				if st := s.ok(t, n); strings.Contains(st.stdout+st.stderr, "exception") {
					t.Errorf("%s: %s", n, st)
				}
			}
			for _, p := range []struct{ m, c, mask, speed, an string }{
				{"m1", "c1", sc.cxrayMask, sc.cxraySpeed, "ON"},
				{"m2", "c2", sc.mstMask, sc.mstSpeed, sc.mstForc},
			} {
				var d cxrayLinkSpeeds
				st := s.step(t, p.c)
				if err := json.Unmarshal([]byte(st.stdout), &d); err != nil || len(d.Links) != 1 || d.Links[0].Operational.Enabled == nil {
					t.Fatalf("%s: %v\n%s", p.c, err, st)
				}
				op := d.Links[0].Operational
				if !sameMask(op.Enabled.Mask, p.mask) || op.Speed != p.speed || op.AutoNegotiation != p.an || op.State != "Active" {
					t.Errorf("%s: cxray link reads enabled %s, speed %s, AN %s, state %s; want %s, %s, %s, Active", p.c, op.Enabled.Mask, op.Speed, op.AutoNegotiation, op.State, p.mask, p.speed, p.an)
				}
				out := mstlinkOut(t, s.ok(t, p.m))
				if got := out["Supported Info"][sc.enabledLabel]; !sameMask(got.Mask, op.Enabled.Mask) {
					t.Errorf("%s: mstlink %s %q, cxray %q", p.m, sc.enabledLabel, got.Mask, op.Enabled.Mask)
				}
				cmpLabel(t, out, "Operational Info", "Speed", op.Speed)
				cmpLabel(t, out, "Operational Info", "State", op.State)
				if an := out["Operational Info"]["Auto Negotiation"].Text; !strings.HasPrefix(an, op.AutoNegotiation) {
					t.Errorf("%s: mstlink Auto Negotiation %q, cxray %q", p.m, an, op.AutoNegotiation)
				}
			}
		})
	}
}

// TestFECVsMstlink: on the port whose partner forces no FEC, `mstlink
// --fec NF --fec_speed 100g` brings the link up and cxray link reads the
// FEC mstlink set; `cxray link --fec RS --fec_speed 100g` takes it back to
// the mismatch, which mstlink reads (state, opcode 38 and its message),
// as cxray does.
func TestFECVsMstlink(t *testing.T) {
	need(t, "mstlink")
	b := "0000:04:00.1"
	script := strings.Join([]string{
		"run ms mstlink -d " + b + " --fec NF --fec_speed 100g",
		"run c1 cxray link -d " + b + " -o json",
		"run m1 mstlink -d " + b + " --json",
		"run cx cxray link -d " + b + " --fec RS --fec_speed 100g --yes --wait 2s",
		"run c2 cxray link -d " + b + " -o json",
		"run m2 mstlink -d " + b + " --json",
	}, "\n") + "\n"
	s := emuRun(t, "link.yaml", script, 4*time.Minute)
	if st := s.ok(t, "ms"); strings.Contains(st.stdout+st.stderr, "exception") {
		t.Errorf("mstlink --fec: %s", st)
	}
	// The write is verified, the link stays down: exit 1.
	if st := s.step(t, "cx"); st.rc != 1 || !strings.Contains(st.stdout, "(read back: verified)") {
		t.Errorf("cxray link --fec RS: %s; want exit 1 with the write verified", st)
	}
	for _, p := range []struct{ c, m, state, fec, verdict string }{
		{"c1", "m1", "Active", "No FEC", ""},
		{"c2", "m2", "Polling", "", "fec_mismatch"},
	} {
		var d cxrayLink
		st := s.step(t, p.c)
		if err := json.Unmarshal([]byte(st.stdout), &d); err != nil || len(d.Links) != 1 {
			t.Fatalf("%s: %v\n%s", p.c, err, st)
		}
		l := d.Links[0]
		fec := ""
		if l.FEC != nil {
			fec = l.FEC.Active
		}
		var codes []string
		for _, v := range l.Verdicts {
			codes = append(codes, v.Code)
		}
		if l.Operational.State != p.state || fec != p.fec || (p.verdict != "" && !contains(codes, p.verdict)) || (p.verdict == "" && len(codes) > 0) {
			t.Errorf("%s: cxray link reads %s, FEC %q, verdicts %v; want %s, %q, %q", p.c, l.Operational.State, fec, codes, p.state, p.fec, p.verdict)
		}
		out := mstlinkOut(t, s.ok(t, p.m))
		cmpLabel(t, out, "Operational Info", "State", l.Operational.State)
		if fec == "" {
			fec = "N/A"
		}
		cmpLabel(t, out, "Operational Info", "FEC", fec)
		if l.Troubleshooting != nil && l.Troubleshooting.StatusOpcode != nil {
			cmpLabel(t, out, "Troubleshooting Info", "Status Opcode", fmt.Sprint(*l.Troubleshooting.StatusOpcode))
			cmpLabel(t, out, "Troubleshooting Info", "Recommendation", l.Troubleshooting.Message)
		}
	}
}

// cxrayLinkLoop is the part of `cxray link -o json` --loopback is checked by.
type cxrayLinkLoop struct {
	Links []struct {
		Operational struct {
			State    string `json:"state"`
			Loopback string `json:"loopback"`
		} `json:"operational"`
	} `json:"links"`
}

// TestLoopbackVsMstlink: on a port whose partner is gone, `mstlink
// --loopback PH` brings the link up in PHY local loopback, which cxray
// link reads; `cxray link --loopback NO` ends it, which mstlink reads;
// on an Ethernet and an InfiniBand port.
func TestLoopbackVsMstlink(t *testing.T) {
	need(t, "mstlink")
	for _, sc := range []struct{ file, bdf, what string }{
		{"link.yaml", "0000:04:00.0", "Ethernet"},
		{"ib.yaml", "0000:ce:00.0", "InfiniBand"},
	} {
		t.Run(sc.what, func(t *testing.T) {
			b := sc.bdf
			script := strings.Join([]string{
				"run ms mstlink -d " + b + " --loopback PH",
				"run c1 cxray link -d " + b + " -o json",
				"run m1 mstlink -d " + b + " --json",
				"run cx cxray link -d " + b + " --loopback NO --yes",
				"run c2 cxray link -d " + b + " -o json",
				"run m2 mstlink -d " + b + " --json",
			}, "\n") + "\n"
			s := emuRun(t, sc.file, script, 4*time.Minute)
			for _, n := range []string{"ms", "cx"} {
				if st := s.ok(t, n); strings.Contains(st.stdout+st.stderr, "exception") {
					t.Errorf("%s: %s", n, st)
				}
			}
			for _, p := range []struct{ c, m, state, loop string }{
				{"c1", "m1", "Active", "PHY Local Loopback"},
				{"c2", "m2", "Polling", ""},
			} {
				var d cxrayLinkLoop
				st := s.step(t, p.c)
				if err := json.Unmarshal([]byte(st.stdout), &d); err != nil || len(d.Links) != 1 {
					t.Fatalf("%s: %v\n%s", p.c, err, st)
				}
				op := d.Links[0].Operational
				if op.State != p.state || (p.loop != "" && op.Loopback != p.loop) {
					t.Errorf("%s: cxray link reads %s, loopback %q; want %s, %q", p.c, op.State, op.Loopback, p.state, p.loop)
				}
				out := mstlinkOut(t, s.ok(t, p.m))
				cmpLabel(t, out, "Operational Info", "State", op.State)
				if p.loop != "" {
					cmpLabel(t, out, "Operational Info", "Loopback Mode", op.Loopback)
				}
			}
		})
	}
}

// TestCableReadVsMstlink: `cxray link --cable --read` gives the bytes
// `mstlink --cable --read` prints (page[P].Byte[N] lines), for a lower and
// an upper page range of the module in an Ethernet and an InfiniBand port,
// and an SFP's A2h map (page 1 to both tools).
func TestCableReadVsMstlink(t *testing.T) {
	need(t, "mstlink")
	for _, sc := range []struct{ file, bdf, page, offset string }{
		{"link.yaml", "0000:03:00.0", "0", "128"},
		{"link.yaml", "0000:03:00.0", "0", "0"},
		{"ib.yaml", "0000:18:00.0", "0", "148"},
		{"sfp.yaml", "0000:03:00.1", "1", "96"}, // an SFP's A2h map: its monitors
	} {
		t.Run(sc.file+"@"+sc.offset, func(t *testing.T) {
			flags := " --cable --read --page " + sc.page + " --offset " + sc.offset + " --length 32"
			s := emuRun(t, sc.file, "run m mstlink -d "+sc.bdf+flags+"\nrun c cxray link -d "+sc.bdf+flags+" -o json\n", 3*time.Minute)
			var d struct {
				Bytes []string `json:"bytes"`
			}
			if err := json.Unmarshal([]byte(s.ok(t, "c").stdout), &d); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range strings.Split(stripANSI(s.ok(t, "m").stdout), "\n") {
				if k, v, ok := strings.Cut(l, ":"); ok && strings.HasPrefix(strings.TrimSpace(k), "page[") {
					got = append(got, strings.TrimSpace(v))
				}
			}
			if strings.Join(got, " ") != strings.Join(d.Bytes, " ") {
				t.Errorf("mstlink %v\ncxray   %v", got, d.Bytes)
			}
		})
	}
}

// stripANSI drops the colour escapes mstlink prints.
func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
