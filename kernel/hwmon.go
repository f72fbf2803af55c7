package kernel

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cxray/cxray/internal/lazyre"
)

// Temperature is one channel of the mlx5 hwmon device.
//
// mlx5_core (Linux 6.6+, when the firmware advertises the MTMP register)
// registers one hwmon device per PCI function, named "mlx5", with a channel
// per ASIC/platform sensor the firmware lists, then one channel for the
// function's module if the module reported a temperature when the driver
// probed (a module plugged in later gets no channel until the driver
// reloads). Labels are the firmware's sensor names, or "sensor<index>" when
// the firmware gives none; module sensors have index 64 + module number.
type Temperature struct {
	Channel int    `json:"channel"` // N of tempN_*
	Label   string `json:"label"`
	// Kind is "module" for the module sensor (label "sensor<64+>" or
	// starting with "module"), "asic" otherwise.
	Kind    string   `json:"kind"`
	Celsius *float64 `json:"celsius,omitempty"`
	// HighestCelsius is the highest reading since the driver enabled
	// tracking (or since root reset it).
	HighestCelsius *float64 `json:"highest_celsius,omitempty"`
	// CritCelsius is the firmware's high warning threshold (about 105 °C on
	// the ASIC, 10 °C below hardware shutdown).
	CritCelsius *float64 `json:"crit_celsius,omitempty"`
	// Problems lists files that exist but could not be read or parsed.
	Problems map[string]string `json:"problems,omitempty"`
}

// Thermal is the function's mlx5 hwmon device.
type Thermal struct {
	// Dir is the hwmon directory read; "" when the function has none.
	Dir   string        `json:"dir,omitempty"`
	Temps []Temperature `json:"temps"`
	// Note explains an empty result.
	Note string `json:"note,omitempty"`
}

var tempInput = lazyre.New(`^temp([0-9]{1,3})_(input|label|highest|crit)$`)

// Temperatures reads the mlx5 hwmon device of the function. A function
// without one (kernel before 6.6, firmware without MTMP, a VF) gives an
// empty Thermal with a Note, not an error.
func (d *Device) Temperatures(ctx context.Context) (*Thermal, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	dir, err := d.hwmonDir()
	if err != nil {
		return nil, err
	}
	if dir == "" {
		return &Thermal{Temps: []Temperature{}, Note: "no mlx5 hwmon device for " + d.BDF + " (it needs Linux 6.6 or later and firmware that has the MTMP register; VFs have none)"}, nil
	}
	files, err := listFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("kernel: %v", err)
	}
	chans := map[int]bool{}
	for _, f := range files {
		if m := tempInput.FindStringSubmatch(f); m != nil {
			n, _ := strconv.Atoi(m[1])
			chans[n] = true
		}
	}
	nums := make([]int, 0, len(chans))
	for n := range chans {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	th := &Thermal{Dir: dir, Temps: []Temperature{}}
	for _, n := range nums {
		t := Temperature{Channel: n}
		problem := func(f string, err error) {
			if t.Problems == nil {
				t.Problems = map[string]string{}
			}
			t.Problems[f] = err.Error()
		}
		base := fmt.Sprintf("temp%d_", n)
		if s, ok, err := readOptional(ctx, filepath.Join(dir, base+"label")); err != nil {
			if cerr := ctxErr(ctx, err); cerr != nil {
				return nil, cerr
			}
			problem(base+"label", err)
		} else if ok {
			t.Label = s
		}
		for _, v := range []struct {
			suffix string
			dst    **float64
		}{{"input", &t.Celsius}, {"highest", &t.HighestCelsius}, {"crit", &t.CritCelsius}} {
			s, ok, err := readOptional(ctx, filepath.Join(dir, base+v.suffix))
			if cerr := ctxErr(ctx, err); cerr != nil {
				return nil, cerr
			}
			if err != nil {
				problem(base+v.suffix, err)
				continue
			}
			if !ok {
				continue
			}
			md, err := parseMillidegrees(s, true)
			if err != nil {
				problem(base+v.suffix, err)
				continue
			}
			c := float64(md) / 1000
			*v.dst = &c
		}
		t.Kind = sensorKind(t.Label)
		th.Temps = append(th.Temps, t)
	}
	return th, nil
}

var sensorIndex = lazyre.New(`^sensor([0-9]+)$`)

// sensorKind tells the module channel from the ASIC ones by its label: the
// kernel names an unnamed sensor "sensor<index>", and module sensors start
// at index 64.
func sensorKind(label string) string {
	l := strings.ToLower(strings.TrimSpace(label))
	if strings.HasPrefix(l, "module") {
		return "module"
	}
	if m := sensorIndex.FindStringSubmatch(l); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n >= 64 {
			return "module"
		}
	}
	return "asic"
}

// hwmonDir finds the function's hwmon device named "mlx5": first under the
// PCI function (where the kernel registers it), then by scanning
// class/hwmon for a device whose parent is the function (older layouts).
func (d *Device) hwmonDir() (string, error) {
	if !exists(d.pciDir) {
		return "", d.goneError()
	}
	isMlx5 := func(dir string) bool {
		s, err := readAttrNow(filepath.Join(dir, "name"))
		return err == nil && strings.TrimSpace(s) == "mlx5"
	}
	subs, err := listDirs(filepath.Join(d.pciDir, "hwmon"))
	if err != nil {
		return "", fmt.Errorf("kernel: %v", err)
	}
	for _, s := range subs {
		if dir := filepath.Join(d.pciDir, "hwmon", s); isMlx5(dir) {
			return dir, nil
		}
	}
	class := filepath.Join(d.opts.root(), "class/hwmon")
	ents, err := os.ReadDir(class)
	if err != nil {
		return "", nil // no hwmon class at all: no sensors
	}
	for i, e := range ents {
		if i > maxEntries {
			break
		}
		dir := filepath.Join(class, e.Name())
		parent, err := filepath.EvalSymlinks(filepath.Join(dir, "device"))
		if err != nil || parent != d.pciDir {
			continue
		}
		if isMlx5(dir) {
			return dir, nil
		}
	}
	return "", nil
}
