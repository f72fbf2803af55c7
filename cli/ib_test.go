package cli

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
)

// gpuNodeManual is examples/gpu-node.yaml on the manual clock, so two
// runs read the same values.
func gpuNodeManual(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../examples/gpu-node.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "gpu-node.yaml")
	if err := os.WriteFile(p, append([]byte("clock: {mode: manual}\n"), b...), 0o644); err != nil {
		t.Fatal(err)
	}
	return "emu:" + p
}

// linkSummary is what `cxray link -o json` must say about a port whatever
// database decodes it: protocol, state, speed and width, the IB logical
// state and counters, and the verdicts.
func linkSummary(t *testing.T, out string) any {
	t.Helper()
	var r struct {
		Links []struct {
			Port        int            `json:"port"`
			Operational map[string]any `json:"operational"`
			Verdicts    []struct {
				Code string `json:"code"`
			} `json:"verdicts"`
		} `json:"links"`
	}
	mustJSON(t, out, &r)
	var res []any
	for _, l := range r.Links {
		var codes []string
		for _, v := range l.Verdicts {
			codes = append(codes, v.Code)
		}
		op := l.Operational
		res = append(res, map[string]any{"port": l.Port, "protocol": op["protocol"], "state": op["state"],
			"physical_state": op["physical_state"], "speed": op["speed"], "width": op["width_lanes"],
			"enabled": op["enabled_speeds"], "cable": op["cable_speeds"], "ib": op["infiniband"], "verdicts": codes})
	}
	return res
}

// healthStatuses are the checks' statuses of `cxray health -o json`
// (identity left out: it says how old each database is).
func healthStatuses(t *testing.T, out string) map[string]any {
	t.Helper()
	var r struct {
		Devices []struct {
			BDF    string `json:"bdf"`
			Checks []struct {
				Name, Status, Summary string
			} `json:"checks"`
		} `json:"devices"`
	}
	mustJSON(t, out, &r)
	got := map[string]any{}
	for _, rep := range r.Devices {
		for _, c := range rep.Checks {
			if c.Name != "identity" {
				got[rep.BDF+" "+c.Name] = c.Status + ": " + c.Summary
			}
		}
	}
	return got
}

// TestRevisionMatrixInfiniBand: the GPU node's InfiniBand ports read the
// same through every PRM revision of the history as through the built-in
// database: status (link layers), link (IB speed names, widths, logical
// state, IB counters, verdicts), health, the IB registers the features
// read, and monitor's counters (port<N>.ib.* under the kernel's names,
// which no revision changes).
func TestRevisionMatrixInfiniBand(t *testing.T) {
	files := prmhistorytest.Files(t)
	sc := gpuNodeManual(t)
	fns := []string{"0000:18:00.0", "0000:5e:00.0", "0000:c0:00.0", "0000:29:00.0"}
	regs := [][]string{{"PTYS", "--index", "proto_mask=1"}, {"PPCNT", "--index", "grp=0x20"}, {"PDDR", "--index", "page_select=0"}}
	run := func(adb string) map[string]any {
		got := map[string]any{}
		out, _ := matrixRun(t, adb, "status", "-d", sc)
		devs := statusDevices(t, out).([]map[string]any)
		for _, d := range devs {
			// An older database than the firmware is said (#30 item 18),
			// by revision: the Ethernet matrix checks the words.
			delete(d, "prm_mismatch")
		}
		got["status"] = devs
		for _, fn := range fns {
			out, code := matrixRun(t, adb, "link", "-d", sc+"@"+fn)
			got["link "+fn] = linkSummary(t, out)
			got["link exit "+fn] = code
			out, _ = matrixRun(t, adb, "health", "-d", sc+"@"+fn)
			got["health "+fn] = healthStatuses(t, out)
		}
		for _, r := range regs {
			out, _ := matrixRun(t, adb, append([]string{"reg", "get", "-d", sc + "@0000:c0:00.0", "--raw"}, r...)...)
			got["reg "+strings.Join(r, " ")] = regFields(t, out)
		}
		out, _ = matrixRun(t, adb, "monitor", "-d", sc, "--all", "--what", "counters", "--count", "3", "-i", "1s")
		ib := map[string]any{}
		for k, v := range monitorValues(t, out) {
			if strings.Contains(k, ".ib.") {
				ib[k] = v
			}
		}
		got["monitor"] = ib
		return got
	}
	ref := run("builtin")
	// What the reference must hold, or the matrix compares nothing.
	if n := len(ref["monitor"].(map[string]any)); n < 8*17 {
		t.Fatalf("the built-in database's monitor run has %d IB counters, want 17 on each of 8 ports", n)
	}
	for _, fn := range fns {
		if n := len(ref["health "+fn].(map[string]any)); n < 8 {
			t.Fatalf("health %s: %d checks read", fn, n)
		}
	}
	if l := ref["link 0000:5e:00.0"].([]any); len(l) != 1 || l[0].(map[string]any)["speed"] != "IB-NDR" || l[0].(map[string]any)["width"] != 2.0 {
		t.Fatalf("link 0000:5e:00.0 reads %v, want IB-NDR over 2 lanes", l)
	}
	for _, f := range files {
		rev := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "hca-ext-rev"), ".adb")
		t.Run(rev, func(t *testing.T) {
			got := run(f)
			var keys []string
			for k := range ref {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if strings.HasPrefix(k, "reg ") {
					// Field by field where the revision names the field:
					// values agree, and some fields always meet.
					w, g := ref[k].(map[string]any), got[k].(map[string]any)
					common := 0
					for p, v := range w {
						if gv, ok := g[p]; ok {
							common++
							if !cmp.Equal(v, gv) {
								t.Errorf("%s: %s = %v, the built-in database reads %v", k, p, gv, v)
							}
						}
					}
					if common == 0 {
						t.Errorf("%s: no field in common with the built-in database", k)
					}
					continue
				}
				if d := cmp.Diff(ref[k], got[k]); d != "" {
					t.Errorf("%s differs (-builtin +%s):\n%s", k, rev, d)
				}
			}
		})
	}
}
