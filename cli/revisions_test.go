package cli

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
)

// The revision matrix: status, module, reg get of every register the
// features read, snapshot and monitor give the same answers whichever
// PRM revision cxray decodes with (the emulated firmware keeps its own
// layout, as a real adapter does).

const matrixScenario = "emu:../examples/two-adapters.yaml"

// matrixRun runs a command with a database and returns its output, which
// must be JSON, and exit code.
func matrixRun(t *testing.T, adb string, args ...string) (string, int) {
	t.Helper()
	// A fresh emulator state per command, so each starts from power-on.
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	out, errs, code := cli(t, "", append([]string{"--adb", adb, "-o", "json"}, args...)...)
	if code > 1 {
		t.Fatalf("--adb %s %v: exit %d\n%s", adb, args, code, errs)
	}
	return out, code
}

// flatten turns a decoded register's JSON into path -> value.
func flatten(prefix string, v any, out map[string]any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flatten(p, e, out)
		}
	case []any:
		for i, e := range x {
			flatten(fmt.Sprintf("%s[%d]", prefix, i), e, out)
		}
	default:
		out[prefix] = v
	}
}

// matrixRegisters are the register instances the features read.
var matrixRegisters = [][]string{
	{"MGIR"}, {"PAOS"}, {"PTYS", "--index", "proto_mask=4"}, {"PMLP"}, {"PMAOS", "--index", "module=0"},
	{"MTMP", "--index", "sensor_index=0"}, {"MTMP", "--index", "sensor_index=64"}, {"MTCAP"},
	{"PPCNT", "--index", "grp=0"}, {"PPCNT", "--index", "grp=1"}, {"PPCNT", "--index", "grp=18"},
	{"PDDR", "--index", "page_select=0"}, {"ROCE_ACCL"},
}

func TestRevisionMatrix(t *testing.T) {
	files := prmhistorytest.Files(t)
	const builtinDB = "builtin"
	// Reference answers with the built-in database.
	refStatus, _ := matrixRun(t, builtinDB, "status", "-d", matrixScenario)
	refModules := map[string]string{}
	for _, fn := range []string{"0000:03:00.0", "0000:03:00.1", "0000:04:00.0", "0000:04:00.1"} {
		out, _ := matrixRun(t, builtinDB, "module", "-d", matrixScenario+"@"+fn, "--all")
		refModules[fn] = out
	}
	refRegs := map[string]map[string]any{}
	for _, r := range matrixRegisters {
		out, _ := matrixRun(t, builtinDB, append([]string{"reg", "get", "-d", matrixScenario, "--raw"}, r...)...)
		refRegs[strings.Join(r, " ")] = regFields(t, out)
	}
	// Three samples, so that the counters have moved on the manual clock:
	// zeros would read the same through any member of a union.
	refMonitor, _ := matrixRun(t, builtinDB, "monitor", "-d", matrixScenario, "--all", "--what", "temp,counters,module", "--count", "3", "-i", "1s")
	moved := 0
	for k, v := range monitorValues(t, refMonitor) {
		if f, ok := v.(float64); ok && f != 0 && strings.Contains(k, ".ppcnt.") {
			moved++
		}
	}
	if moved < 10 {
		t.Fatalf("only %d PPCNT counters moved in the reference monitor run: the matrix would compare zeros", moved)
	}
	refSnap, _ := matrixRun(t, builtinDB, "snapshot", "-d", matrixScenario, "--all")

	for _, f := range files {
		rev := strings.TrimSuffix(strings.TrimPrefix(f[strings.LastIndexByte(f, '/')+1:], "hca-ext-rev"), ".adb")
		t.Run(rev, func(t *testing.T) {
			out, _ := matrixRun(t, f, "status", "-d", matrixScenario)
			// A database two years older than the firmware is said (the
			// only line that may differ), naming this revision.
			devs := statusDevices(t, out).([]map[string]any)
			for _, d := range devs {
				if m, ok := d["prm_mismatch"].(string); ok {
					if !strings.Contains(m, "(Rev "+rev+",") {
						t.Errorf("status prm_mismatch %q does not name Rev %s", m, rev)
					}
					delete(d, "prm_mismatch")
				}
			}
			if d := cmp.Diff(statusDevices(t, refStatus), any(devs)); d != "" {
				t.Errorf("status differs from the built-in database's (-builtin +%s):\n%s", rev, d)
			}
			for fn, ref := range refModules {
				out, _ := matrixRun(t, f, "module", "-d", matrixScenario+"@"+fn, "--all")
				if d := cmp.Diff(moduleSummary(t, ref), moduleSummary(t, out)); d != "" {
					t.Errorf("module %s differs (-builtin +%s):\n%s", fn, rev, d)
				}
			}
			for _, r := range matrixRegisters {
				out, _ := matrixRun(t, f, append([]string{"reg", "get", "-d", matrixScenario, "--raw"}, r...)...)
				got, want := regFields(t, out), refRegs[strings.Join(r, " ")]
				common := 0
				for p, v := range want {
					if g, ok := got[p]; ok {
						common++
						if !cmp.Equal(g, v) {
							t.Errorf("reg get %v: %s = %v, the built-in database reads %v", r, p, g, v)
						}
					}
				}
				// Revisions may name every field otherwise (Rev 0.51's PMLP
				// has lane<i>_module_mapping dwords), but some must meet.
				if common == 0 {
					t.Errorf("reg get %v: no field in common with the built-in database", r)
				}
			}
			out, _ = matrixRun(t, f, "monitor", "-d", matrixScenario, "--all", "--what", "temp,counters,module", "--count", "3", "-i", "1s")
			diffValues(t, "monitor", monitorValues(t, refMonitor), monitorValues(t, out))
			out, _ = matrixRun(t, f, "snapshot", "-d", matrixScenario, "--all")
			if d := cmp.Diff(snapshotSummary(t, refSnap), snapshotSummary(t, out)); d != "" {
				t.Errorf("snapshot differs (-builtin +%s):\n%s", rev, d)
			}
		})
	}
}

func regFields(t *testing.T, out string) map[string]any {
	t.Helper()
	var r struct {
		Fields map[string]any `json:"fields"`
	}
	mustJSON(t, out, &r)
	m := map[string]any{}
	flatten("", r.Fields, m)
	return m
}

func statusDevices(t *testing.T, out string) any {
	t.Helper()
	var s struct {
		Devices []map[string]any `json:"devices"`
	}
	mustJSON(t, out, &s)
	return s.Devices
}

// moduleSummary is what must not depend on the database: the verdicts,
// the EEPROM decode (bytes cxray decodes itself) and the firmware view's
// monitors.
func moduleSummary(t *testing.T, out string) any {
	t.Helper()
	var r struct {
		Modules []struct {
			Port     int              `json:"port"`
			Module   int              `json:"module"`
			EEPROM   json.RawMessage  `json:"eeprom"`
			Firmware map[string]any   `json:"firmware"`
			Verdicts []map[string]any `json:"verdicts"`
		} `json:"modules"`
	}
	mustJSON(t, out, &r)
	type mod struct {
		Port, Module  int
		EEPROM        string
		Temp, Voltage any
		Lanes         any
		Verdicts      []string
	}
	var out2 []mod
	for _, m := range r.Modules {
		x := mod{Port: m.Port, Module: m.Module, EEPROM: string(m.EEPROM)}
		if m.Firmware != nil {
			x.Temp, x.Voltage, x.Lanes = m.Firmware["temperature"], m.Firmware["voltage"], m.Firmware["lanes"]
		}
		for _, v := range m.Verdicts {
			x.Verdicts = append(x.Verdicts, fmt.Sprint(v["code"]))
		}
		out2 = append(out2, x)
	}
	return out2
}

// monitorValues maps "device key" to each value, and "device errors" to
// the errors of the sample.
func monitorValues(t *testing.T, out string) map[string]any {
	t.Helper()
	all := map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var s struct {
			Device string             `json:"device"`
			Values map[string]float64 `json:"values"`
			Errors []string           `json:"errors"`
		}
		mustJSON(t, l, &s)
		for k, v := range s.Values {
			all[s.Device+" "+k] = v
		}
		all[s.Device+" errors"] = strings.Join(s.Errors, "; ")
	}
	return all
}

// diffValues names each key that differs.
func diffValues(t *testing.T, what string, want, got map[string]any) {
	t.Helper()
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	var bad []string
	for k := range keys {
		w, ok1 := want[k]
		g, ok2 := got[k]
		// PPCNT counters carry the database's field names, which
		// revisions change (Rev 0.51's dot3stats_*): the same name must
		// hold the same value; a name one database lacks says nothing.
		if strings.Contains(k, ".ppcnt.") && ok1 != ok2 {
			continue
		}
		if ok1 != ok2 || !cmp.Equal(w, g) {
			bad = append(bad, fmt.Sprintf("%s: builtin %v, got %v", k, w, g))
		}
	}
	sort.Strings(bad)
	for _, b := range bad[:min(len(bad), 20)] {
		t.Errorf("%s: %s", what, b)
	}
}

// snapshotSummary: the identity of every device and which registers
// could not be read.
func snapshotSummary(t *testing.T, out string) any {
	t.Helper()
	var f struct {
		Devices []struct {
			BDF       string         `json:"bdf"`
			Identity  map[string]any `json:"identity"`
			Registers []struct {
				Key   string `json:"key"`
				Error string `json:"error"`
			} `json:"registers"`
		} `json:"devices"`
	}
	mustJSON(t, out, &f)
	var res []any
	for _, d := range f.Devices {
		var failed []string
		for _, r := range d.Registers {
			if r.Error != "" {
				failed = append(failed, r.Key)
			}
		}
		sort.Strings(failed)
		res = append(res, map[string]any{"bdf": d.BDF, "identity": d.Identity, "unreadable": failed})
	}
	return res
}
