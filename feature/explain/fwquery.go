package explain

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cxray/cxray/feature/osmac"
	"github.com/cxray/cxray/internal/lazyre"
	"github.com/cxray/cxray/prm"
)

// Firmware query outputs: `flint -d DEV q` / `mstflint -d DEV q` (labels
// as mstflint's flint/subcommands.cpp prints them: "FW Version:", "PSID:",
// "Base MAC:  <mac>  <count>"), and the device listings of mlxup and
// mlxfwmanager ("Device #n:", "PCI Device Name:", "Base MAC:" without a
// count, "Versions: Current Available" with FW/PXE/UEFI rows). They are
// read leniently: indented, with a prompt, several devices, ConnectX-3's
// per-port "Base MAC1:"/"Base MAC2:", a MAC of 16 hex digits.

// FirmwareQuery is what a firmware query output holds.
type FirmwareQuery struct {
	// Format: "flint query", "mlxup", "mlxfwmanager".
	Format  string           `json:"format"`
	Devices []FirmwareDevice `json:"devices"`
	Notes   []string         `json:"notes,omitempty"`
}

// FirmwareDevice is one adapter of the output.
type FirmwareDevice struct {
	Device       string    `json:"device,omitempty"`
	Type         string    `json:"type,omitempty"`
	PartNumber   string    `json:"part_number,omitempty"`
	Description  string    `json:"description,omitempty"`
	PSID         string    `json:"psid,omitempty"`
	FW           string    `json:"fw_version,omitempty"`
	FWRunning    string    `json:"fw_running,omitempty"`
	FWAvailable  string    `json:"fw_available,omitempty"`
	ReleaseDate  string    `json:"release_date,omitempty"`
	BaseGUID     string    `json:"base_guid,omitempty"`
	BaseMACs     []BaseMAC `json:"base_macs,omitempty"`
	SecurityAttr string    `json:"security_attributes,omitempty"`
	Status       string    `json:"status,omitempty"`
}

// BaseMAC is a "Base MAC:" line: the address and how many follow it (0:
// the line gives no count, as mlxup's does).
type BaseMAC struct {
	Label string `json:"label"`
	MAC   string `json:"mac"`
	Count int    `json:"count,omitempty"`
}

var (
	fqKV      = lazyre.New(`^\s*([A-Za-z][A-Za-z0-9 ()/._-]*?)\s*:\s*(.*)$`)
	baseMACRE = lazyre.New(`(?i)^base\s*mac\s*([0-9]*)$`)
	hexRun    = lazyre.New(`^(?:[0-9a-fA-F]{12}|[0-9a-fA-F]{16}|(?:[0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2})$`)
)

// ReadFirmwareQuery reads a flint/mstflint q output or an
// mlxup/mlxfwmanager listing.
func ReadFirmwareQuery(text string) (*FirmwareQuery, error) {
	lines := splitLines(text)
	q := &FirmwareQuery{Format: "flint query"}
	var cur *FirmwareDevice
	inVersions := false
	start := func() {
		q.Devices = append(q.Devices, FirmwareDevice{})
		cur = &q.Devices[len(q.Devices)-1]
		inVersions = false
	}
	for i, raw := range lines {
		l := strings.TrimSpace(raw)
		low := strings.ToLower(l)
		switch {
		case l == "" || strings.Trim(l, "-=") == "":
			continue
		case strings.Contains(low, "mlxfwmanager") || strings.HasPrefix(low, "querying mellanox devices firmware") && q.Format != "mlxfwmanager":
			if strings.Contains(low, "mlxfwmanager") {
				q.Format = "mlxfwmanager"
			} else if q.Format == "flint query" {
				q.Format = "mlxup"
			}
			continue
		case strings.HasPrefix(l, "Device #"):
			if q.Format == "flint query" {
				q.Format = "mlxup"
			}
			start()
			continue
		}
		if inVersions {
			f := strings.Fields(l)
			if len(f) >= 2 && !strings.Contains(f[0], ":") {
				if strings.EqualFold(f[0], "FW") {
					cur.FW = f[1]
					if len(f) >= 3 {
						cur.FWAvailable = f[2]
					}
				}
				continue
			}
			inVersions = false
		}
		m := fqKV.FindStringSubmatch(raw)
		if m == nil {
			continue
		}
		key, val := strings.ToLower(strings.TrimSpace(m[1])), strings.TrimSpace(m[2])
		if cur == nil {
			start()
		}
		if bm := baseMACRE.FindStringSubmatch(key); bm != nil {
			f := strings.Fields(val)
			if len(f) == 0 {
				return nil, fmt.Errorf("line %d: %q has no address", i+1, l)
			}
			mac, ok := normalizeFlintMAC(f[0])
			if !ok {
				return nil, fmt.Errorf("line %d: Base MAC %q is no MAC address (12 hex digits, or 16 with leading zeros)", i+1, f[0])
			}
			b := BaseMAC{Label: strings.TrimSpace(m[1]), MAC: mac}
			if len(f) >= 2 {
				n, err := strconv.Atoi(f[1])
				if err != nil || n < 1 || n > 256 {
					return nil, fmt.Errorf("line %d: Base MAC count %q: want 1..256", i+1, f[1])
				}
				b.Count = n
			}
			cur.BaseMACs = append(cur.BaseMACs, b)
			continue
		}
		switch key {
		case "device type":
			cur.Type = val
		case "part number":
			cur.PartNumber = val
		case "description":
			if !strings.HasPrefix(val, "UID") { // flint's "Description: UID GuidsNumber" heading
				cur.Description = val
			}
		case "psid":
			cur.PSID = val
		case "fw version":
			cur.FW = val
		case "fw version(running)", "fw version (running)":
			cur.FWRunning = val
		case "fw release date":
			cur.ReleaseDate = val
		case "pci device name", "device":
			cur.Device = val
		case "base guid":
			if f := strings.Fields(val); len(f) > 0 {
				cur.BaseGUID = strings.ToLower(f[0])
			}
		case "security attributes":
			cur.SecurityAttr = val
		case "status":
			cur.Status = val
		case "versions":
			inVersions = true
		}
	}
	var keep []FirmwareDevice
	for _, d := range q.Devices {
		if d.FW != "" || d.PSID != "" || len(d.BaseMACs) > 0 || d.BaseGUID != "" {
			keep = append(keep, d)
		}
	}
	q.Devices = keep
	if len(q.Devices) == 0 {
		return nil, fmt.Errorf("no FW Version, PSID or Base MAC line: not a flint/mstflint q, mlxup or mlxfwmanager output")
	}
	return q, nil
}

// normalizeFlintMAC reads a MAC as flint and mlxup print it: 12 hex digits,
// 16 with four leading zeros (a 64-bit field printed whole), or with
// colons or dashes.
func normalizeFlintMAC(s string) (string, bool) {
	if !hexRun.MatchString(s) {
		return "", false
	}
	if len(s) == 16 {
		if !strings.HasPrefix(s, "0000") {
			return "", false
		}
		s = s[4:]
	}
	return osmac.NormalizeMAC(s)
}

// PermanentMACs lists the adapters' permanent MACs: each Base MAC and the
// count after it (one per function: the driver gives function f the base
// plus f). A Base MAC without a count (mlxup, mlxfwmanager) stands for the
// ports the description names ("Dual-port": 2), else one; notes say what
// was assumed.
func (q *FirmwareQuery) PermanentMACs() ([]string, []string, error) {
	var out, notes []string
	for _, d := range q.Devices {
		for _, b := range d.BaseMACs {
			n := b.Count
			if n == 0 {
				n = portsOf(d.Description)
				notes = append(notes, fmt.Sprintf("%s %s has no count: %d MAC(s) assumed from the description (one per port)", cmpOr(d.Device, "the device"), b.Label, n))
			}
			macs, err := MACRange(b.MAC, n)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, macs...)
		}
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("no Base MAC line (an mstflint -d DEV q, flint -d DEV q, mlxup or mlxfwmanager output has one)")
	}
	if len(q.Devices) > 1 {
		notes = append(notes, fmt.Sprintf("%d devices: the permanent MACs of all of them", len(q.Devices)))
	}
	return out, notes, nil
}

var portsRE = lazyre.New(`(?i)\b(single|dual|quad|one|two|four|[1-8])[- ]port`)

func portsOf(desc string) int {
	m := portsRE.FindStringSubmatch(desc)
	if m == nil {
		return 1
	}
	switch strings.ToLower(m[1]) {
	case "single", "one", "1":
		return 1
	case "dual", "two", "2":
		return 2
	case "quad", "four", "4":
		return 4
	}
	n, _ := strconv.Atoi(m[1])
	return max(n, 1)
}

// MACRange is n consecutive MACs from base.
func MACRange(base string, n int) ([]string, error) {
	b, err := strconv.ParseUint(strings.ReplaceAll(base, ":", ""), 16, 64)
	if err != nil {
		return nil, fmt.Errorf("base MAC %q: %v", base, err)
	}
	// The addresses are 48 bits: a range that would run past the last
	// one does not wrap to 00:00:00:00:00:00; the input is damaged.
	if last := b + uint64(n) - 1; n < 1 || last > 0xffffffffffff {
		return nil, fmt.Errorf("base MAC %s with %d addresses runs past ff:ff:ff:ff:ff:ff: the query output is damaged or not flint's", base, n)
	}
	out := make([]string, n)
	for i := range out {
		out[i] = prm.FormatMAC(b + uint64(i))
	}
	return out, nil
}

func cmpOr(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
