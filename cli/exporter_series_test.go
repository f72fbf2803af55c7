package cli

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cxray/cxray/feature/exporter/exportertest"
	"github.com/cxray/cxray/optics"
)

// seriesCase is one exporter run whose exposition is checked: plain -d emu
// and every example scenario.
type seriesCase struct {
	name string
	args []string
}

func seriesCases(t *testing.T) []seriesCase {
	t.Helper()
	cs := []seriesCase{{"emu", []string{"-d", "emu"}}}
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example scenarios: %v", err)
	}
	for _, f := range files {
		abs, _ := filepath.Abs(f)
		args := []string{"-d", "emu:" + abs, "--all"}
		if strings.Contains(f, "semaphore-held") {
			// Every read waits for the held semaphore until the
			// scrape's deadline: keep it short.
			args = append(args, "--scrape-timeout", "2s")
		}
		cs = append(cs, seriesCase{filepath.Base(f), args})
	}
	return cs
}

// exposition scrapes one exporter run.
func exposition(t *testing.T, c seriesCase) (*exportertest.Scrape, string) {
	t.Helper()
	privateState(t)
	r := startExporter(t, c.args...)
	defer r.stop()
	return scrapeURL(t, r.url)
}

var (
	perLaneName = regexp.MustCompile(`lane_?\d`)
	totalTotal  = regexp.MustCompile(`_total_(total|bytes_total)$`)
)

// The exposition has the shape Prometheus users expect, on every scenario:
// lanes are labels, never part of a metric name; no _total_total; no
// label with an empty value; a family keeps one set of label names per
// source of data (cxray_module_info the same for the EEPROM and the
// firmware's view).
func TestExporterSeriesShape(t *testing.T) {
	for _, c := range seriesCases(t) {
		t.Run(c.name, func(t *testing.T) {
			s, _ := exposition(t, c)
			if len(s.Find("cxray_device_up")) == 0 {
				t.Fatal("no cxray_device_up")
			}
			moduleLabels := map[string]string{}
			for _, smp := range s.Samples {
				if !strings.HasPrefix(smp.Name, "cxray_") {
					continue
				}
				if perLaneName.MatchString(smp.Name) {
					t.Errorf("per-lane metric name %s", smp.Name)
				}
				if totalTotal.MatchString(smp.Name) {
					t.Errorf("doubled _total in %s", smp.Name)
				}
				for k, v := range smp.Labels {
					if v == "" {
						t.Errorf("%s%v: empty label %s", smp.Name, smp.Labels, k)
					}
				}
				if smp.Name == "cxray_module_info" {
					var names []string
					for k := range smp.Labels {
						names = append(names, k)
					}
					sort.Strings(names)
					moduleLabels[smp.Labels["source"]] = strings.Join(names, ",")
					if strings.Contains(smp.Labels["identifier"], "firmware") {
						t.Errorf("module_info identifier names its source: %v", smp.Labels)
					}
				}
			}
			if len(moduleLabels) > 1 && moduleLabels["eeprom"] != moduleLabels["firmware"] {
				t.Errorf("cxray_module_info labels differ by source: %v", moduleLabels)
			}
		})
	}
}

// promtool, Prometheus' own linter, accepts the exposition of -d emu and
// of every example scenario without a remark (TestExporterPassesPromtool
// checks the fleet alone).
func TestExporterPromtoolCheckMetrics(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (Debian package prometheus); scripts/setup.sh installs it")
	}
	for _, c := range seriesCases(t) {
		t.Run(c.name, func(t *testing.T) {
			_, text := exposition(t, c)
			cmd := exec.Command(promtool, "check", "metrics")
			cmd.Stdin = strings.NewReader(text)
			if out, err := cmd.CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) != 0 {
				t.Errorf("promtool check metrics: %v\n%s", err, out)
			}
		})
	}
}

// The two-adapters scenario: lanes as labels of one family; the module
// state with its error type; the firmware's view of a module (MCIA
// refused) names the identifier as the EEPROM does; the pending firmware
// on the register backend.
func TestExporterSeriesTwoAdapters(t *testing.T) {
	abs, _ := filepath.Abs("../examples/two-adapters.yaml")
	s, _ := exposition(t, seriesCase{"two-adapters", []string{"-d", "emu:" + abs, "--all"}})
	lanes := map[string]bool{}
	for _, smp := range s.Find("cxray_ppcnt_rs_fec_corrected_symbols_per_lane_total", "device", "0000:03:00.0", "port", "1") {
		lanes[smp.Labels["lane"]] = true
	}
	if len(lanes) != 8 || !lanes["0"] || !lanes["7"] {
		t.Errorf("per-lane RS-FEC symbols: lanes %v, want 0..7", lanes)
	}
	if _, ok := s.Value("cxray_ppcnt_rs_fec_corrected_symbols_total", "device", "0000:03:00.0", "port", "1"); !ok {
		t.Error("the port's RS-FEC corrected symbols total is missing")
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"cxray_module_status_info", []string{"device", "0000:04:00.1", "port", "1", "oper_status", "module_plugged_with_error", "error_type", "High_Temperature"}, 1},
		{"cxray_module_error", []string{"device", "0000:04:00.1", "port", "1"}, 1},
		{"cxray_module_status_info", []string{"device", "0000:03:00.0", "port", "1", "oper_status", "plugged_enabled"}, 1},
		{"cxray_module_error", []string{"device", "0000:03:00.0", "port", "1"}, 0},
		{"cxray_module_info", []string{"device", "0000:04:00.0", "source", "firmware", "identifier", optics.IdentifierName(0x11).Name}, 1},
		{"cxray_device_firmware_pending", []string{"device", "0000:03:00.0"}, 1},
		{"cxray_device_firmware_pending", []string{"device", "0000:04:00.0"}, 0},
	} {
		if got, ok := s.Value(c.name, c.labels...); !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if ss := s.Find("cxray_module_status_info", "device", "0000:03:00.0"); len(ss) != 1 || ss[0].Labels["error_type"] != "" {
		t.Errorf("a module without error has no error_type label: %v", ss)
	}
}

// The OS's MAC is in the netdev info metric, so MAC drift is alertable.
func TestExporterSeriesMACDrift(t *testing.T) {
	abs, _ := filepath.Abs("../examples/troubled.yaml")
	s, _ := exposition(t, seriesCase{"troubled", []string{"-d", "emu:" + abs}})
	ss := s.Find("cxray_netdev_info", "netdev", "ens1f0np0")
	if len(ss) != 1 || ss[0].Labels["address"] != "02:11:22:33:44:55" || ss[0].Labels["permanent_address"] == "02:11:22:33:44:55" {
		t.Fatalf("netdev info %v: want the drifted address 02:11:22:33:44:55 and the burnt-in one", ss)
	}
	if v, ok := s.Value("cxray_netdev_address_changed", "netdev", "ens1f0np0"); !ok || v != 1 {
		t.Errorf("cxray_netdev_address_changed = %v (found %v), want 1", v, ok)
	}
}

// The exporter's NVMe-oF series are what `cxray nvmf` reads on the same
// emulated device at the same (manual) time: one reader for both.
func TestExporterNVMFMatchesCLI(t *testing.T) {
	privateState(t)
	sc := scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", "")
	// An hour of emulated traffic first (the emulator keeps its clock
	// between commands), so the counters have moved.
	cliJSON(t, "nvmf", "-d", "emu:"+sc, "--interval", "1h")
	r := startExporter(t, "-d", "emu:"+sc)
	s, _ := scrapeURL(t, r.url)
	r.stop()
	var rep struct {
		Offload    bool `json:"offload"`
		Namespaces []struct {
			XRQN   uint32            `json:"xrqn"`
			NSID   uint32            `json:"nsid"`
			Totals map[string]uint64 `json:"totals"`
		} `json:"namespaces"`
	}
	mustJSON(t, string(cliJSON(t, "nvmf", "-d", "emu:"+sc)), &rep)
	if !rep.Offload || len(rep.Namespaces) == 0 {
		t.Fatalf("the default profile should have NVMe-oF offload namespaces: %+v", rep)
	}
	if v, ok := s.Value("cxray_nvmf_namespaces"); !ok || int(v) != len(rep.Namespaces) {
		t.Errorf("cxray_nvmf_namespaces = %v (found %v), want %d", v, ok, len(rep.Namespaces))
	}
	metric := map[string]string{
		"read_cmds": "cxray_nvmf_read_commands_total", "read_blocks": "cxray_nvmf_read_blocks_total",
		"write_cmds": "cxray_nvmf_write_commands_total", "write_blocks": "cxray_nvmf_write_blocks_total",
		"inline_writes": "cxray_nvmf_inline_write_commands_total", "flushes": "cxray_nvmf_flush_commands_total",
		"errors": "cxray_nvmf_error_commands_total", "backend_errors": "cxray_nvmf_backend_error_commands_total",
	}
	moving := false
	for _, ns := range rep.Namespaces {
		if len(ns.Totals) != len(metric) {
			t.Errorf("nvmf -o json has counters %v; the exporter maps %d", ns.Totals, len(metric))
		}
		for k, want := range ns.Totals {
			name := metric[k]
			got, ok := s.Value(name, "xrq", strconv.Itoa(int(ns.XRQN)), "nsid", strconv.Itoa(int(ns.NSID)))
			if !ok || got != float64(want) {
				t.Errorf("xrq %d ns %d %s: exporter %s = %v (found %v), CLI %d", ns.XRQN, ns.NSID, k, name, got, ok, want)
			}
			moving = moving || want > 0
		}
	}
	if !moving {
		t.Error("every counter is 0: the comparison shows nothing")
	}
}
