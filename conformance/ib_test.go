package conformance

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ibPorts are the emulated InfiniBand ports of testdata/ib.yaml and the
// verdict each calls for.
var ibPorts = []struct{ bdf, what, verdict string }{
	{"0000:18:00.0", "healthy NDR", ""},
	{"0000:5e:00.0", "trained at 2x", "width_degraded"},
	{"0000:9a:00.0", "switch stops at HDR", "speed_mismatch"},
	{"0000:c0:00.0", "error recoveries", "link_error_recovery"},
	{"0000:ce:00.0", "partner gone", "link_down"},
	{"0000:dc:00.0", "degraded lane", "lane_degraded"},
}

// cxrayIBLink is the part of `cxray link -o json` compared on IB ports.
type cxrayIBLink struct {
	Links []struct {
		Operational struct {
			Protocol   string `json:"protocol"`
			State      string `json:"state"`
			Speed      string `json:"speed"`
			WidthLanes *int   `json:"width_lanes"`
			Enabled    *struct {
				Mask string `json:"mask"`
			} `json:"enabled_speeds"`
			Cable *struct {
				Mask string `json:"mask"`
			} `json:"cable_speeds"`
			IB *struct {
				LogicalState string `json:"logical_state"`
				Counters     *struct {
					LinkDowned        *uint64 `json:"link_downed"`
					LinkErrorRecovery *uint64 `json:"link_error_recovery"`
				} `json:"counters"`
			} `json:"infiniband"`
		} `json:"operational"`
		FEC *struct {
			Active string `json:"active"`
		} `json:"fec"`
		Troubleshooting *struct {
			StatusOpcode *uint64 `json:"status_opcode"`
			Message      string  `json:"message"`
		} `json:"troubleshooting"`
		Counters *struct {
			EffectiveErrors *uint64 `json:"effective_errors_bits"`
			RawBER          struct {
				Firmware string `json:"firmware"`
			} `json:"raw_ber"`
			Lanes []struct {
				RawErrors *uint64 `json:"raw_errors_bits"`
			} `json:"lanes"`
		} `json:"counters"`
		Verdicts []struct {
			Code string `json:"code"`
		} `json:"verdicts"`
	} `json:"links"`
}

// TestLinkInfiniBandVsMstlink: on emulated InfiniBand ports `cxray link`
// and `mstlink` / `mstlink -c` agree: state, speed (IB-NDR ...), width,
// FEC, the enabled and cable speed masks, the troubleshooting opcode and
// message, the raw BER and errors per lane of the lanes the link runs on,
// the effective errors, and the IB link down and link error recovery
// counters (PPCNT's InfiniBand group); each port's verdict is the one its
// problem calls for, with the same exit code in both output modes.
//
// The physical state is not compared: mstlink 4.21 prints the Ethernet
// auto-negotiation state machine (eth_an_fsm_state) on InfiniBand ports
// too, where cxray reads the IB PHY's (ib_phy_fsm_state), as later
// mstflint releases do (mlxlink_commander.cpp, operatingInfoPage).
func TestLinkInfiniBandVsMstlink(t *testing.T) {
	need(t, "mstlink")
	var script strings.Builder
	script.WriteString(`cxray emu ctl --socket "$SOCK" advance 10m >/dev/null` + "\n")
	for i, p := range ibPorts {
		fmt.Fprintf(&script, "run plain%d mstlink -d %s --json\n", i, p.bdf)
		fmt.Fprintf(&script, "run counters%d mstlink -d %s -c --json\n", i, p.bdf)
		fmt.Fprintf(&script, "run cxray%d cxray link -d %s -o json\n", i, p.bdf)
		fmt.Fprintf(&script, "run text%d cxray link -d %s --counters\n", i, p.bdf)
	}
	s := emuServe(t, "ib.yaml", script.String(), 4*time.Minute)
	for i, p := range ibPorts {
		t.Run(p.what, func(t *testing.T) {
			plain := mstlinkOut(t, s.ok(t, fmt.Sprintf("plain%d", i)))
			withC := mstlinkOut(t, s.ok(t, fmt.Sprintf("counters%d", i)))
			st := s.step(t, fmt.Sprintf("cxray%d", i))
			var doc cxrayIBLink
			if err := json.Unmarshal([]byte(st.stdout), &doc); err != nil || len(doc.Links) != 1 {
				t.Fatalf("cxray link -o json: %v\n%s", err, st)
			}
			l := doc.Links[0]
			op := l.Operational
			if op.Protocol != "InfiniBand" || op.IB == nil {
				t.Fatalf("cxray link reads port protocol %q, IB side %v; want InfiniBand", op.Protocol, op.IB)
			}
			if text := s.step(t, fmt.Sprintf("text%d", i)); text.rc != st.rc {
				t.Errorf("exit %d in table mode, %d in JSON mode", text.rc, st.rc)
			}
			var codes []string
			for _, v := range l.Verdicts {
				codes = append(codes, v.Code)
			}
			switch {
			case p.verdict == "" && (len(codes) > 0 || st.rc != 0):
				t.Errorf("healthy port: verdicts %v, exit %d; want none and 0", codes, st.rc)
			case p.verdict != "" && (st.rc != 1 || !contains(codes, p.verdict)):
				t.Errorf("verdicts %v, exit %d; want %s and exit 1", codes, st.rc, p.verdict)
			}
			opInfo, sup, tr := "Operational Info", "Supported Info", "Troubleshooting Info"
			for _, out := range []MstlinkOutput{plain, withC} {
				cmpLabel(t, out, opInfo, "State", op.State)
				speed, width, fec := "N/A", "N/A", "N/A"
				if op.Speed != "" {
					speed = op.Speed
				}
				if op.WidthLanes != nil {
					width = fmt.Sprintf("%dx", *op.WidthLanes)
				}
				if l.FEC != nil && l.FEC.Active != "" {
					fec = l.FEC.Active
				}
				cmpLabel(t, out, opInfo, "Speed", speed)
				cmpLabel(t, out, opInfo, "Width", width)
				cmpLabel(t, out, opInfo, "FEC", fec)
				if l.Troubleshooting == nil || l.Troubleshooting.StatusOpcode == nil {
					t.Fatal("cxray link read no troubleshooting status")
				}
				cmpLabel(t, out, tr, "Status Opcode", strconv.FormatUint(*l.Troubleshooting.StatusOpcode, 10))
				cmpLabel(t, out, tr, "Recommendation", l.Troubleshooting.Message)
				for _, m := range []struct {
					label string
					mask  *struct {
						Mask string `json:"mask"`
					}
				}{{"Enabled Link Speed", op.Enabled}, {"Supported Cable Speed", op.Cable}} {
					if m.mask == nil {
						t.Errorf("cxray link has no %s", m.label)
						continue
					}
					got, ok := out[sup][m.label]
					if !ok || !sameMask(got.Mask, m.mask.Mask) {
						t.Errorf("%s: mstlink %q, cxray %q", m.label, got.Mask, m.mask.Mask)
					}
				}
			}
			ber := "Physical Counters and BER Info"
			if op.State != "Active" {
				for _, label := range []string{"Raw Physical BER", "Link Down Counter", "Link Error Recovery Counter"} {
					cmpLabel(t, withC, ber, label, "N/A")
				}
				return
			}
			c, ib := l.Counters, op.IB.Counters
			if c == nil || ib == nil || ib.LinkDowned == nil || ib.LinkErrorRecovery == nil {
				t.Fatalf("cxray link read no counters: %+v %+v", c, ib)
			}
			cmpLabel(t, withC, ber, "Link Down Counter", strconv.FormatUint(*ib.LinkDowned, 10))
			cmpLabel(t, withC, ber, "Link Error Recovery Counter", strconv.FormatUint(*ib.LinkErrorRecovery, 10))
			cmpLabel(t, withC, ber, "Raw Physical BER", c.RawBER.Firmware)
			var lanes []string
			for _, ln := range c.Lanes {
				lanes = append(lanes, strconv.FormatUint(*ln.RawErrors, 10))
			}
			cmpLabel(t, withC, ber, "Raw Physical Errors Per Lane", strings.Join(lanes, ","))
			eff := strings.TrimPrefix(withC[ber]["Effective Physical Errors"].Text, "N/A_")
			if c.EffectiveErrors == nil || eff != strconv.FormatUint(*c.EffectiveErrors, 10) {
				t.Errorf("effective errors: mstlink %q, cxray %v", withC[ber]["Effective Physical Errors"].Text, ptrString(c.EffectiveErrors))
			}
			if t.Failed() {
				t.Logf("mstlink -c:\n%s\ncxray link:\n%s", s.ok(t, fmt.Sprintf("counters%d", i)).stdout, s.step(t, fmt.Sprintf("text%d", i)).stdout)
			}
		})
	}
}

// sameMask compares two hex masks whatever their width (0x000000f7 and
// 0x00f7).
func sameMask(a, b string) bool {
	x, err1 := strconv.ParseUint(strings.TrimPrefix(a, "0x"), 16, 64)
	y, err2 := strconv.ParseUint(strings.TrimPrefix(b, "0x"), 16, 64)
	return err1 == nil && err2 == nil && x == y
}

// TestInfiniBandRealTime: examples/gpu-node.yaml under `emu run`, on the
// wall clock, as a user meets it: the kernel's view of the IB ports
// (/sys/class/infiniband through FUSE: rate of the degraded port, link
// layer, the planted port's symbol errors moving between two reads two
// seconds apart), `cxray status` naming the IB functions, and `cxray
// link --interval` over registers finding the symbol errors growing at
// the planted rate, the degraded port trained at 2x, through both the
// register path and the kernel backend.
func TestInfiniBandRealTime(t *testing.T) {
	need(t)
	script := `run rate cat /sys/class/infiniband/mlx5_3/ports/1/rate
run layer cat /sys/class/infiniband/mlx5_0/ports/1/link_layer
run sym1 cat /sys/class/infiniband/mlx5_5/ports/1/counters/symbol_error
sleep 2
run sym2 cat /sys/class/infiniband/mlx5_5/ports/1/counters/symbol_error
run status cxray status -o json
run noisy cxray link -d 0000:c0:00.0 --interval 2s -o json
run degraded cxray link -d mlx5_3 -o json
run kernel cxray link -d kernel:mlx5_3 -o json
`
	s := emuRun(t, "../../examples/gpu-node.yaml", script, 3*time.Minute)
	if got := strings.TrimSpace(s.ok(t, "rate").stdout); got != "200 Gb/sec (2X NDR)" {
		t.Errorf("mlx5_3 rate %q, want 200 Gb/sec (2X NDR)", got)
	}
	if got := strings.TrimSpace(s.ok(t, "layer").stdout); got != "InfiniBand" {
		t.Errorf("mlx5_0 link_layer %q", got)
	}
	a, _ := strconv.ParseUint(strings.TrimSpace(s.ok(t, "sym1").stdout), 10, 64)
	b, _ := strconv.ParseUint(strings.TrimSpace(s.ok(t, "sym2").stdout), 10, 64)
	// 4 a second; two seconds and the time to start cat: at least 6.
	if b-a < 6 || b-a > 400 {
		t.Errorf("symbol_error went from %d to %d over two seconds; want about 8 more", a, b)
	}
	var st struct {
		Devices []struct {
			BDF        string   `json:"bdf"`
			LinkLayers []string `json:"link_layers"`
			Netdevs    []string `json:"netdevs"`
		} `json:"devices"`
	}
	if err := json.Unmarshal([]byte(s.ok(t, "status").stdout), &st); err != nil || len(st.Devices) != 10 {
		t.Fatalf("status: %v, %d devices", err, len(st.Devices))
	}
	ib := 0
	for _, d := range st.Devices {
		if len(d.LinkLayers) == 1 && d.LinkLayers[0] == "InfiniBand" && len(d.Netdevs) == 1 && strings.HasPrefix(d.Netdevs[0], "ibp") {
			ib++
		}
	}
	if ib != 8 {
		t.Errorf("status names %d InfiniBand functions with IPoIB interfaces, want 8: %+v", ib, st.Devices)
	}
	var noisy struct {
		Links []struct {
			Rates *struct {
				IBSymbolErrorsPerS *float64 `json:"ib_symbol_errors_per_s"`
			} `json:"rates"`
			Verdicts []struct {
				Code string `json:"code"`
			} `json:"verdicts"`
		} `json:"links"`
	}
	x := s.step(t, "noisy")
	if err := json.Unmarshal([]byte(x.stdout), &noisy); err != nil || len(noisy.Links) != 1 || noisy.Links[0].Rates == nil {
		t.Fatalf("link --interval: %v\n%s", err, x)
	}
	r := noisy.Links[0].Rates.IBSymbolErrorsPerS
	if r == nil || *r < 2 || *r > 8 || x.rc != 1 {
		t.Errorf("symbol errors %v/s (exit %d), want about 4/s and exit 1", r, x.rc)
	}
	for _, name := range []string{"degraded", "kernel"} {
		var doc struct {
			Links []struct {
				Operational struct {
					Speed      string `json:"speed"`
					WidthLanes *int   `json:"width_lanes"`
				} `json:"operational"`
			} `json:"links"`
		}
		st := s.step(t, name)
		if err := json.Unmarshal([]byte(st.stdout), &doc); err != nil || len(doc.Links) != 1 {
			t.Fatalf("%s: %v\n%s", name, err, st)
		}
		op := doc.Links[0].Operational
		if op.Speed != "IB-NDR" || op.WidthLanes == nil || *op.WidthLanes != 2 {
			t.Errorf("%s: speed %q width %v, want IB-NDR over 2 lanes", name, op.Speed, op.WidthLanes)
		}
	}
}

// TestLinkInfiniBandFaultsVsMstlink: an IB port's partner goes away and
// comes back under `emu serve` (emu ctl's link faults): both tools see the
// port go down with the firmware's reason, then up again with its IB link
// down counter at 1, which cxray judges (link_downed, exit 1).
func TestLinkInfiniBandFaultsVsMstlink(t *testing.T) {
	need(t, "mstlink")
	const bdf = "0000:18:00.0"
	script := `ctl() { cxray emu ctl --socket "$SOCK" "$@" >/dev/null; }
ctl advance 1m
ctl --bdf ` + bdf + ` fault link.partner=absent
run c1 mstlink -d ` + bdf + ` -c --json
run x1 cxray link -d ` + bdf + ` -o json
ctl --bdf ` + bdf + ` fault link.partner=present
ctl advance 1m
run c2 mstlink -d ` + bdf + ` -c --json
run x2 cxray link -d ` + bdf + ` -o json
`
	s := emuServe(t, "ib.yaml", script, 3*time.Minute)
	for _, step := range []struct {
		c, x, state, code, downs string
	}{{"c1", "x1", "Polling", "link_down", "N/A"}, {"c2", "x2", "Active", "link_downed", "1"}} {
		out := mstlinkOut(t, s.ok(t, step.c))
		x := s.step(t, step.x)
		var doc cxrayIBLink
		if err := json.Unmarshal([]byte(x.stdout), &doc); err != nil || len(doc.Links) != 1 {
			t.Fatalf("%s: %v\n%s", step.x, err, x)
		}
		l := doc.Links[0]
		var codes []string
		for _, v := range l.Verdicts {
			codes = append(codes, v.Code)
		}
		if x.rc != 1 || !contains(codes, step.code) || l.Operational.State != step.state {
			t.Errorf("%s: exit %d, state %q, verdicts %v; want %s, %s and exit 1", step.x, x.rc, l.Operational.State, codes, step.state, step.code)
		}
		cmpLabel(t, out, "Operational Info", "State", l.Operational.State)
		if l.Troubleshooting != nil && l.Troubleshooting.StatusOpcode != nil {
			cmpLabel(t, out, "Troubleshooting Info", "Status Opcode", strconv.FormatUint(*l.Troubleshooting.StatusOpcode, 10))
			cmpLabel(t, out, "Troubleshooting Info", "Recommendation", l.Troubleshooting.Message)
		}
		cmpLabel(t, out, "Physical Counters and BER Info", "Link Down Counter", step.downs)
		if ib := l.Operational.IB; step.downs != "N/A" && (ib == nil || ib.Counters == nil || ib.Counters.LinkDowned == nil || strconv.FormatUint(*ib.Counters.LinkDowned, 10) != step.downs) {
			t.Errorf("%s: cxray link_downed %+v, want %s", step.x, ib, step.downs)
		}
	}
}
