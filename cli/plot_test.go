package cli

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlot(t *testing.T) {
	sc := scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", "")
	dir := t.TempDir()
	data := filepath.Join(dir, "m.jsonl")
	if _, errs, code := cli(t, "", "--adb", "builtin", "monitor", "-d", "emu:"+sc, "-i", "5m", "--count", "12", "--what", "temp", "--format", "jsonl", "--out", data); code != 0 {
		t.Fatalf("monitor: %d %s", code, errs)
	}
	// A torn last line (a crash) is skipped, not fatal.
	f, _ := os.OpenFile(data, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"time":"2024-05-01T09:`)
	f.Close()

	svg := filepath.Join(dir, "t.svg")
	out, errs, code := cli(t, "", "plot", data, "--out", svg, "--threshold", "warn=60", "-o", "json")
	if code != 0 {
		t.Fatalf("plot: %d %s", code, errs)
	}
	if !strings.Contains(out, `"skipped_lines": 1`) {
		t.Errorf("torn line not reported: %s", out)
	}
	b, _ := os.ReadFile(svg)
	for _, want := range []string{"<svg", "— 0000:03:00.0", ">temp.asic_c<", ">temp.module1_c<", "temp.asic_threshold_hi_c", "warn"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	pngFile := filepath.Join(dir, "t.png")
	if _, errs, code := cli(t, "", "plot", data, "--out", pngFile, "--what", "asic_c"); code != 0 {
		t.Fatalf("png: %d %s", code, errs)
	}
	pf, _ := os.Open(pngFile)
	defer pf.Close()
	img, err := png.Decode(pf)
	if err != nil || img.Bounds().Dx() < 400 {
		t.Errorf("not a PNG chart: %v", err)
	}
	if _, errs, code := cli(t, "", "plot", data, "--out", filepath.Join(dir, "x.gif")); code != 2 || !strings.Contains(errs, ".svg, .png or .pdf") {
		t.Errorf("bad extension: %d %s", code, errs)
	}
	if _, errs, code := cli(t, "", "plot", data, "--out", svg, "--what", "nothing.here"); code != 2 || !strings.Contains(errs, "nothing to plot") {
		t.Errorf("no series: %d %s", code, errs)
	}
	// The monitor's group name, and axis labels from the keys.
	b, _ = os.ReadFile(svg)
	if out, errs, code := cli(t, "", "plot", data, "--out", svg, "--what", "temp"); code != 0 || !strings.Contains(out, "y axis: temperature (°C)") {
		t.Errorf("--what temp: %d %s %s", code, out, errs)
	}
	b, _ = os.ReadFile(svg)
	for _, want := range []string{"temperature (°C)", "time (UTC), 2024-05-01"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("SVG lacks the axis label %q", want)
		}
	}
	// A table written by mistake is refused with the reason.
	table := filepath.Join(dir, "table.txt")
	if _, errs, code := cli(t, "", "--adb", "builtin", "monitor", "-d", "emu:"+sc, "-i", "5m", "--count", "2", "--what", "temp", "--out", table); code != 0 {
		t.Fatalf("monitor table: %d %s", code, errs)
	}
	if _, errs, code := cli(t, "", "plot", table, "--out", svg); code != 2 || !strings.Contains(errs, "table output (--format table)") {
		t.Errorf("table: %d %s", code, errs)
	}
}

// A chart of one quantity carries that quantity's thresholds only: the
// Rx-power chart of a module recording gets the Rx-power limits, not the
// bias, temperature and voltage ones; a frame-rate chart gets none.
func TestPlotThresholdsOfThePlottedQuantity(t *testing.T) {
	sc := scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", "")
	dir := t.TempDir()
	data := filepath.Join(dir, "m.jsonl")
	if _, errs, code := cli(t, "", "--adb", "builtin", "monitor", "-d", "emu:"+sc, "-i", "5m", "--count", "4", "--what", "module,counters", "--format", "jsonl", "--out", data); code != 0 {
		t.Fatalf("monitor: %d %s", code, errs)
	}
	for _, c := range []struct {
		what string
		want int
	}{
		{"port1.module.*.rx_power_mw", 4}, // high and low, alarm and warning
		{"port1.module.temperature_c", 4},
		{"*frames_received_ok", 0},
		{"module", 40}, // every module quantity of both ports: their own limits
	} {
		svg := filepath.Join(dir, "c.svg")
		out, errs, code := cli(t, "", "plot", data, "--out", svg, "--what", c.what, "-o", "json")
		var doc struct {
			Thresholds int
			Series     []string
		}
		mustJSON(t, out, &doc)
		if code != 0 || doc.Thresholds != c.want {
			t.Errorf("--what %s: exit %d, %d threshold lines, want %d (%d series)%s", c.what, code, doc.Thresholds, c.want, len(doc.Series), errs)
		}
		b, _ := os.ReadFile(svg)
		if c.what == "port1.module.*.rx_power_mw" {
			for _, q := range []string{"tx_bias_ma", "temperature_c", "voltage_v", "tx_power_mw"} {
				if strings.Contains(string(b), "threshold."+q) {
					t.Errorf("the Rx-power chart draws a %s threshold", q)
				}
			}
		}
	}
}
