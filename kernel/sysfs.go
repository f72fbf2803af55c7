package kernel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// maxAttr bounds one attribute read: sysfs shows at most one page, and a
// fake or broken tree must not make us read a huge file.
const maxAttr = 4096

// maxEntries bounds the files taken from one directory (counters, ports,
// hwmon channels). mlx5 has about 40 hardware counters per port; the bound
// only protects against a runaway tree.
const maxEntries = 1024

// readAttr reads one sysfs attribute, trimmed of its trailing newline.
//
// Attributes backed by firmware (hw_counters, PMA counters, hwmon inputs)
// block in the kernel until the firmware answers, and such a read cannot be
// interrupted; it runs in a goroutine so the caller gets ctx.Err() when ctx
// ends first. The goroutine finishes when the kernel gives up on the
// firmware command, so at most one read per caller is ever left behind:
// every caller checks ctx before starting the next read.
func readAttr(ctx context.Context, path string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := readFileHook(path)
		ch <- result{s, err}
	}()
	select {
	case r := <-ch:
		return r.s, r.err
	case <-ctx.Done():
		return "", fmt.Errorf("%s: %w (the kernel is still waiting for the adapter's firmware)", path, ctx.Err())
	}
}

// readFileHook is readAttrNow; tests replace it to make a read block.
var readFileHook = readAttrNow

func readAttrNow(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxAttr+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxAttr {
		return "", fmt.Errorf("%s: longer than %d bytes, not a sysfs attribute", path, maxAttr)
	}
	return strings.TrimRight(string(b), "\n"), nil
}

// readOptional reads an attribute that may be absent: ok is false, with no
// error, when the file does not exist.
func readOptional(ctx context.Context, path string) (s string, ok bool, err error) {
	s, err = readAttr(ctx, path)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return s, true, nil
}

// listFiles returns the regular files of a directory, sorted; a missing
// directory gives none.
func listFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		out = append(out, e.Name())
		if len(out) > maxEntries {
			return nil, fmt.Errorf("%s: more than %d files, not a sysfs directory", dir, maxEntries)
		}
	}
	sort.Strings(out)
	return out, nil
}

// listDirs returns the subdirectories (or links to directories) of dir.
func listDirs(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if fi, err := os.Stat(filepath.Join(dir, e.Name())); err != nil || !fi.IsDir() {
			continue
		}
		out = append(out, e.Name())
		if len(out) > maxEntries {
			return nil, fmt.Errorf("%s: more than %d entries, not a sysfs directory", dir, maxEntries)
		}
	}
	sort.Strings(out)
	return out, nil
}

// errNoPMA is the value some RDMA drivers print for a PMA counter they
// cannot read ("N/A (no PMA)"); the counter is left out.
var errNoPMA = errors.New("not available (no PMA)")

// parseCounter reads a counter attribute: an unsigned decimal ("%llu").
func parseCounter(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "N/A") {
		return 0, errNoPMA
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("counter %q is not an unsigned decimal", s)
	}
	return v, nil
}

// parseIndexed reads the "<id>: <NAME>" form of the port state and
// physical state attributes ("4: ACTIVE", "5: LinkUp", "7: Phy Test").
func parseIndexed(s string) (int, string, error) {
	id, name, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return 0, "", fmt.Errorf("%q is not '<number>: <name>'", s)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(id), 10, 8)
	if err != nil {
		return 0, "", fmt.Errorf("%q is not '<number>: <name>'", s)
	}
	return int(n), strings.TrimSpace(name), nil
}

// Rate is a port's data rate as the rate attribute gives it: active width
// times per-lane speed ("400 Gb/sec (4X NDR)"). Ethernet ports report the
// IB width/speed pair the driver maps their Ethernet speed to.
type Rate struct {
	Gbps  float64 `json:"gbps"`
	Width int     `json:"width"`           // lanes: 1, 2, 4, 8, 12
	Speed string  `json:"speed,omitempty"` // SDR has none; DDR QDR FDR10 FDR EDR HDR NDR XDR
}

// parseRate reads "<Gb/s> Gb/sec (<width>X[ <speed>])". The figure is a
// whole number, or ends in ".5" for the SDR/DDR-based rates.
func parseRate(s string) (Rate, error) {
	bad := fmt.Errorf("rate %q is not '<n> Gb/sec (<w>X <speed>)'", s)
	s = strings.TrimSpace(s)
	num, rest, ok := strings.Cut(s, " Gb/sec (")
	if !ok || !strings.HasSuffix(rest, ")") {
		return Rate{}, bad
	}
	g, err := strconv.ParseFloat(num, 64)
	if err != nil || g < 0 || g > 1e6 || strings.ContainsAny(num, "eEinfINFxX+-_pP") {
		return Rate{}, bad
	}
	rest = strings.TrimSuffix(rest, ")")
	w, speed, _ := strings.Cut(rest, " ")
	if !strings.HasSuffix(w, "X") {
		return Rate{}, bad
	}
	width, err := strconv.ParseUint(strings.TrimSuffix(w, "X"), 10, 8)
	if err != nil || width == 0 || strings.ContainsAny(speed, " ()") {
		return Rate{}, bad
	}
	return Rate{Gbps: g, Width: int(width), Speed: speed}, nil
}

// parseGUID reads a GUID as sysfs prints it: four groups of four hex digits
// separated by colons ("b83f:d203:001a:2b3c").
func parseGUID(s string) (uint64, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) != 4 {
		return 0, fmt.Errorf("GUID %q is not xxxx:xxxx:xxxx:xxxx", s)
	}
	var v uint64
	for _, p := range parts {
		if len(p) != 4 {
			return 0, fmt.Errorf("GUID %q is not xxxx:xxxx:xxxx:xxxx", s)
		}
		n, err := strconv.ParseUint(p, 16, 16)
		if err != nil {
			return 0, fmt.Errorf("GUID %q is not xxxx:xxxx:xxxx:xxxx", s)
		}
		v = v<<16 | n
	}
	return v, nil
}

// parseHex reads a "0x"-prefixed hexadecimal attribute (lid, sm_lid,
// cap_mask, hw_rev, PCI IDs).
func parseHex(s string, bits int) (uint64, error) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "0x") && !strings.HasPrefix(t, "0X") {
		return 0, fmt.Errorf("%q is not a 0x-prefixed number", s)
	}
	v, err := strconv.ParseUint(t[2:], 16, bits)
	if err != nil {
		return 0, fmt.Errorf("%q is not a %d-bit hexadecimal number", s, bits)
	}
	return v, nil
}

// parseMillidegrees reads an hwmon temperature attribute (millidegrees
// Celsius, "%ld"). For the mlx5 hwmon device it also undoes a kernel quirk:
// the driver multiplies the firmware's 16-bit two's-complement reading
// (0.125 °C units) by 125 without sign-extending it, so a temperature below
// zero arrives as a value between 4 096 000 and 8 191 875. No adapter runs
// at 4096 °C, so values in that range are taken as the negative reading they
// encode.
func parseMillidegrees(s string, mlx5 bool) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("temperature %q is not a decimal number of millidegrees", s)
	}
	if mlx5 && v >= 32768*125 && v <= 65535*125 && v%125 == 0 {
		v -= 65536 * 125
	}
	return v, nil
}
