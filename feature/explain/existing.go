package explain

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/cxray/cxray/feature/hexdump"
	"github.com/cxray/cxray/feature/modules"
	"github.com/cxray/cxray/feature/monitor"
	"github.com/cxray/cxray/feature/osmac"
	"github.com/cxray/cxray/feature/snapshot"
	"github.com/cxray/cxray/internal/lazyre"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/tlv"
	"github.com/cxray/cxray/optics"
)

// The kinds cxray read before explain: each is read by the same code as
// the command that reads it (config query --from, config restore, mac,
// module --file, prm decode, diff, plot).

var (
	queryRowRE   = lazyre.New(`^(?:\s+\*?|\*)\s*[A-Z][A-Za-z0-9_]+(\[\d+\])?\s{2,}\S+`)
	hexdumpCRE   = lazyre.New(`^[0-9a-fA-F]{7,8}\s+([0-9a-fA-F]{2}\s+){8}`)
	xxdRE        = lazyre.New(`^[0-9a-fA-F]{7,8}: [0-9a-fA-F]{4} [0-9a-fA-F]{4}`)
	ethHexRE     = lazyre.New(`^\s*0x[0-9a-fA-F]{3,4}:\s+([0-9a-fA-F]{2}\s+){4}`)
	odRE         = lazyre.New(`^[0-7]{7}( [0-9a-fA-F]{2,6}){2,}`)
	dwordsRE     = lazyre.New(`^\s*(0x)?[0-9a-fA-F]{8}((\s+|,\s*)(0x)?[0-9a-fA-F]{8}){1,}\s*$`)
	mstregHeadRE = lazyre.New(`(?i)^\s*(Field Name|Address)\s*\|\s*Data\s*$`)
	mstregRowRE  = lazyre.New(`^\s*[\w.\[\]]+\s*\|\s*0x[0-9a-fA-F]+\s*$`)
	ipLinkRE     = lazyre.New(`^\d+: [\w.@-]+: <`)
	ipBriefRE    = lazyre.New(`^[\w.@-]+\s+(UP|DOWN|UNKNOWN|LOWERLAYERDOWN)\s+([0-9a-f]{2}:){5}[0-9a-f]{2}`)
	netAdapterRE = lazyre.New(`^Name\s+InterfaceDescription\s+ifIndex\s+Status\s+MacAddress`)
	monitorCSVRE = lazyre.New(`^time,device,alerts,frozen,errors`)
	cxrayRegRE   = lazyre.New(`^[A-Z][A-Z0-9_]+ \(0x[0-9a-fA-F]+\)( on .*)?:?$`)
	cxrayRowRE   = lazyre.New(`^\s*[a-z_][\w.\[\]]*\s{2,}\S`)
)

func init() {
	register(KindMlxconfig, &kind{
		title: "mlxconfig/mstconfig query",
		anchor: func(ls []string, i int) bool {
			t := trimmed(ls[i])
			switch {
			case strings.HasPrefix(t, "Configurations:"):
				return true
			case strings.HasPrefix(t, "Device #") || strings.HasPrefix(t, "Device type:"):
				return lookahead(ls, i, 14, func(l string) bool { return strings.HasPrefix(trimmed(l), "Configurations:") })
			}
			// A | grep fragment: two rows in a row.
			return queryRowRE.MatchString(ls[i]) && !strings.Contains(ls[i], ":") && i+1 < len(ls) && queryRowRE.MatchString(ls[i+1])
		},
		belongs: func(l string) bool {
			t := trimmed(l)
			return queryRowRE.MatchString(l) || strings.Trim(t, "-=") == "" || headerLike(t) || nvconfIsElision(t) ||
				strings.HasPrefix(t, "-I-") || strings.HasPrefix(t, "-W-") || strings.HasPrefix(t, "Apply new Configuration") || strings.HasPrefix(t, "Applying") || strings.HasPrefix(t, "The '*' shows")
		},
		read:     readMlxconfig,
		commands: [][]string{{"mlxconfig*", "q"}, {"mlxconfig*", "query"}, {"mstconfig", "q"}, {"mstconfig", "query"}, {"mlxconfig*", "set"}, {"mlxconfig*", "s"}, {"mstconfig", "set"}},
	})
	register(KindNVBackup, &kind{
		title: "NV configuration backup (mstconfig raw TLV file, cxray backup)",
		anchor: func(ls []string, i int) bool {
			t := trimmed(ls[i])
			return t == nvconf.RawFileSignature || strings.HasPrefix(t, nvconf.BackupSignature)
		},
		belongs:  func(l string) bool { return true },
		read:     readBackup,
		commands: [][]string{{"mstconfig", "backup"}, {"mlxconfig*", "backup"}},
	})
	register(KindFirmwareQuery, &kind{
		title: "firmware query (flint/mstflint q, mlxup, mlxfwmanager)",
		anchor: func(ls []string, i int) bool {
			t := trimmed(ls[i])
			switch {
			case strings.HasPrefix(t, "Image type:"), strings.HasPrefix(t, "Querying Mellanox devices firmware"), strings.HasPrefix(t, "Querying NVIDIA devices firmware"):
				return true
			case strings.HasPrefix(t, "FW Version:"):
				return lookahead(ls, i, 12, func(l string) bool {
					t := trimmed(l)
					return strings.HasPrefix(t, "PSID:") || strings.HasPrefix(t, "Base MAC") || strings.HasPrefix(t, "Base GUID")
				})
			case strings.HasPrefix(t, "Device #"):
				return lookahead(ls, i, 10, func(l string) bool {
					return strings.HasPrefix(trimmed(l), "PCI Device Name:") || strings.HasPrefix(trimmed(l), "Versions:")
				})
			}
			return false
		},
		belongs: func(l string) bool {
			t := trimmed(l)
			return kvLineRE.MatchString(l) || indented(l) || strings.HasPrefix(t, "Device #") || strings.Trim(t, "-=") == ""
		},
		read:     readFirmwareQuery,
		commands: [][]string{{"flint", "q"}, {"flint", "query"}, {"mstflint", "q"}, {"mstflint", "query"}, {"mlxup*"}, {"mlxfwmanager*"}, {"flint.exe", "q"}},
	})
	register(KindRegisterDump, &kind{
		title: "hex dump (register or module bytes)",
		anchor: func(ls []string, i int) bool {
			l := ls[i]
			t := trimmed(l)
			return hexdumpCRE.MatchString(t) || xxdRE.MatchString(t) || ethHexRE.MatchString(l) || mstregHeadRE.MatchString(t) ||
				strings.HasPrefix(t, "Sending access register") || odRE.MatchString(t) || dwordsRE.MatchString(t) ||
				(cxrayRegRE.MatchString(t) && lookahead(ls, i, 2, func(l string) bool { return strings.HasPrefix(trimmed(l), "FIELD") || cxrayRowRE.MatchString(l) })) ||
				(strings.HasPrefix(t, "Offset") && strings.Contains(t, "Values"))
		},
		belongs: func(l string) bool {
			t := trimmed(l)
			return hexdumpCRE.MatchString(t) || xxdRE.MatchString(t) || ethHexRE.MatchString(l) || mstregRowRE.MatchString(t) || mstregHeadRE.MatchString(t) ||
				t == "*" || odRE.MatchString(t) || dwordsRE.MatchString(t) || strings.Trim(t, "-=") == "" || regexp.MustCompile(`^[0-9a-fA-F]{6,8}$`).MatchString(t) ||
				strings.HasPrefix(t, "-I-") || strings.HasPrefix(t, "Sending access register") || cxrayRowRE.MatchString(l) || strings.HasPrefix(t, "FIELD") || strings.HasPrefix(t, "index ")
		},
		read:     readDump,
		commands: [][]string{{"ethtool", "-m"}, {"ethtool", "--module-info"}, {"mstreg"}, {"mlxreg*"}, {"xxd"}, {"hexdump"}, {"od"}},
	})
	register(KindOSListing, &kind{
		title: "OS interface listing (ipconfig /all, Get-NetAdapter, ip link)",
		anchor: func(ls []string, i int) bool {
			t := trimmed(ls[i])
			return t == "Windows IP Configuration" || ipLinkRE.MatchString(t) || ipBriefRE.MatchString(t) || netAdapterRE.MatchString(t) ||
				(strings.HasPrefix(t, "Ethernet adapter ") && strings.HasSuffix(t, ":"))
		},
		belongs: func(l string) bool {
			t := trimmed(l)
			return indented(l) || ipLinkRE.MatchString(t) || ipBriefRE.MatchString(t) || kvLineRE.MatchString(l) || strings.Trim(t, "- ") == "" ||
				(strings.HasSuffix(t, ":") && strings.Contains(t, "adapter")) || regexp.MustCompile(`^\S+\s+.*([0-9A-F]{2}-){5}[0-9A-F]{2}`).MatchString(t)
		},
		read:     readOSListing,
		commands: [][]string{{"ipconfig*"}, {"get-netadapter"}, {"ip", "link"}, {"ip", "l"}, {"ip", "-br", "link"}, {"ip", "-j", "link"}},
	})
	register(KindCxrayMonitor, &kind{
		title: "cxray monitor file (JSON lines or CSV)",
		anchor: func(ls []string, i int) bool {
			return monitorCSVRE.MatchString(trimmed(ls[i])) || strings.HasPrefix(trimmed(ls[i]), `{"time":`)
		},
		belongs:  func(l string) bool { return !isKernelLine(l) },
		read:     readMonitor,
		commands: [][]string{{"cxray", "monitor"}},
	})
	register(KindCxraySnapshot, &kind{
		title:    "cxray snapshot",
		anchor:   func(ls []string, i int) bool { return false }, // JSON: found by jsonKind
		belongs:  func(l string) bool { return true },
		read:     readSnapshot,
		commands: [][]string{{"cxray", "snapshot"}},
	})
}

func headerLike(t string) bool {
	for _, k := range []string{"Device #", "Device type:", "Name:", "Description:", "Device:", "Configurations:", "PSID:", "FW Version:", "Part Number:"} {
		if strings.HasPrefix(t, k) {
			return true
		}
	}
	return false
}

func nvconfIsElision(t string) bool {
	x := strings.Trim(t, "()[]<> ")
	return x == "..." || x == "…"
}

func readMlxconfig(p *Part, dbs Databases) {
	qs, err := nvconf.ParseQueryText(joinLines(p.text), dbs.NV)
	if err != nil {
		p.Error = err.Error()
		return
	}
	p.fact("devices", strconv.Itoa(len(qs)))
	var data []QueryDevice
	for i, q := range qs {
		dev := cmpOr(q.Device, q.Name, fmt.Sprintf("device %d", i+1))
		pending, modified := 0, 0
		var rows []QueryParameter
		for _, s := range q.Result.Settings {
			row := QueryParameter{Name: s.Name}
			if s.Next != nil {
				row.NextBoot = &s.Next.Text
			}
			if s.Current != nil {
				row.Current = &s.Current.Text
			}
			if s.Default != nil {
				row.Default = &s.Default.Text
			}
			rows = append(rows, row)
			if s.Pending {
				pending++
				p.add(Finding{Severity: SevWarning, Category: CatConfig, Device: dev,
					What: fmt.Sprintf("%s: Next Boot %s differs from Current %s: a change waiting for a firmware reset", s.Name, s.Next.Text, s.Current.Text),
					Next: "apply it (cxray config apply -d DEV, mlxfwreset, or a cold reboot), or set it back if it was not meant"})
			}
			if s.Modified {
				modified++
			}
		}
		for _, n := range q.Notes {
			p.Notes = append(p.Notes, dev+": "+n)
		}
		if len(q.Unknown) > 0 {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: %d name(s) unknown to the parameter database: %s", dev, len(q.Unknown), strings.Join(q.Unknown, ", ")))
		}
		p.fact(dev, fmt.Sprintf("%s, %d parameters (%s), %d differ from default, %d pending", cmpOr(q.DeviceType, "type not shown"), len(q.Result.Settings), strings.Join(q.Columns, "/"), modified, pending))
		if psn := find(q.Result, "LOG_TX_PSN_WINDOW"); psn != "" {
			p.fact(dev+" LOG_TX_PSN_WINDOW", psn)
		}
		data = append(data, QueryDevice{Device: dev, Type: q.DeviceType, Columns: q.Columns, Parameters: rows})
		for _, n := range q.Notes {
			if strings.HasPrefix(n, "no header") {
				p.Partial = true
			}
		}
	}
	if len(qs) > 1 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d devices, each explained; config query --from and config diff need --file-device to pick one", len(qs)))
	}
	p.Data = data
}

// QueryDevice is one device of a pasted mlxconfig query, as explain's
// JSON data gives it.
type QueryDevice struct {
	Columns    []string         `json:"columns"`
	Device     string           `json:"device"`
	Parameters []QueryParameter `json:"parameters"`
	Type       string           `json:"type"`
}

// QueryParameter is one parameter line: the columns the output had.
type QueryParameter struct {
	Current  *string `json:"current,omitempty"`
	Default  *string `json:"default,omitempty"`
	Name     string  `json:"name"`
	NextBoot *string `json:"next_boot,omitempty"`
}

func find(r *nvconf.QueryResult, name string) string {
	for _, s := range r.Settings {
		if s.Name == name && s.Next != nil {
			return s.Next.Text
		}
	}
	return ""
}

func readBackup(p *Part, dbs Databases) {
	var hc *nvconf.HeaderCodec
	if dbs.Registers != nil {
		hc, _ = tlv.NewHeaderCodec(dbs.Registers, "MNVDA")
	}
	b, err := nvconf.ReadBackupFile(joinLines(p.text), hc, dbs.NV)
	if err != nil {
		p.Error = err.Error()
		if strings.Contains(err.Error(), "cut") || strings.Contains(err.Error(), "count") || strings.Contains(err.Error(), "checksum") {
			p.Partial = true
		}
		return
	}
	p.fact("format", b.Format)
	p.fact("TLVs", strconv.Itoa(len(b.TLVs)))
	if dbs.NV != nil {
		res, unknown := nvconf.SettingsFromTLVs(b.TLVs, dbs.NV)
		p.fact("parameters", strconv.Itoa(len(res.Settings)))
		if len(unknown) > 0 {
			p.Notes = append(p.Notes, "TLV types the parameter database does not know: "+strings.Join(unknown, ", "))
		}
		var rows []map[string]string
		for _, s := range res.Settings {
			if s.Next != nil {
				rows = append(rows, map[string]string{"name": s.Name, "value": s.Next.Text})
			}
		}
		p.Data = rows
	}
	if b.Unchecked {
		p.add(Finding{Severity: SevInfo, Category: CatInput, What: "this file carries no count or checksum: nothing proves it is whole",
			Next: "compare its TLV count with the device's before restoring (cxray config restore asks)"})
	}
}

func readFirmwareQuery(p *Part, dbs Databases) {
	q, err := ReadFirmwareQuery(joinLines(p.text))
	if err != nil {
		p.Error = err.Error()
		return
	}
	p.Title = q.Format
	p.Notes = append(p.Notes, q.Notes...)
	for i, d := range q.Devices {
		name := cmpOr(d.Device, fmt.Sprintf("device %d", i+1))
		p.fact(name+" firmware", d.FW)
		p.fact(name+" running", d.FWRunning)
		p.fact(name+" PSID", d.PSID)
		p.fact(name+" type", d.Type)
		p.fact(name+" part number", d.PartNumber)
		for _, b := range d.BaseMACs {
			v := b.MAC
			if b.Count > 0 {
				v += fmt.Sprintf(" (%d)", b.Count)
			}
			p.fact(name+" "+b.Label, v)
		}
		p.fact(name+" base GUID", d.BaseGUID)
		if d.FWRunning != "" && d.FW != "" && d.FWRunning != d.FW {
			p.add(Finding{Severity: SevWarning, Category: CatFirmware, Device: name,
				What: fmt.Sprintf("the stored firmware %s is not the one running (%s): an update waits for a reset", d.FW, d.FWRunning),
				Next: "reset the firmware (mlxfwreset -d DEV reset, or a cold reboot) to run it"})
		}
		if d.FWAvailable != "" && d.FWAvailable != "N/A" && d.FW != "" && d.FWAvailable != d.FW {
			p.add(Finding{Severity: SevInfo, Category: CatFirmware, Device: name, What: fmt.Sprintf("firmware %s is available (%s installed)", d.FWAvailable, d.FW)})
		}
	}
	macs, notes, err := q.PermanentMACs()
	if err == nil {
		p.fact("permanent MACs", strings.Join(macs, ", "))
		p.Notes = append(p.Notes, notes...)
	}
	p.Data = q
}

func readDump(p *Part, dbs Databases) {
	d, err := hexdump.Read(joinLines(p.text))
	if err != nil {
		p.Error = err.Error()
		return
	}
	p.Notes = append(p.Notes, d.Notes...)
	p.fact("format", d.Format)
	cmd := strings.ToLower(p.Command)
	moduleHint := strings.Contains(cmd, "ethtool") && (strings.Contains(cmd, "-m") || strings.Contains(cmd, "module")) ||
		strings.Contains(cmd, "sfp") || strings.Contains(cmd, "qsfp") || strings.Contains(cmd, "eeprom") || strings.Contains(cmd, "module")
	if d.Bytes == nil || d.Register != "" {
		p.Kind, p.Title = KindRegisterDump, "register dump ("+d.Format+")"
		explainRegisterDump(p, d, dbs)
		return
	}
	looksModule := len(d.Bytes) > 0 && !d.Missing(0, 1) && optics.StandardOf(d.Bytes[0]) != "" && len(d.Bytes) >= optics.HalfSize
	cutModule := len(d.Gaps) > 0 && d.Gaps[0].From == 0 && (len(d.Bytes) == 256 || len(d.Bytes) == 512 || len(d.Bytes) == 640)
	if !moduleHint && !looksModule && !cutModule {
		p.Kind, p.Title = KindRegisterDump, "byte dump ("+d.Format+")"
		explainRegisterDump(p, d, dbs)
		return
	}
	p.Kind, p.Title = KindModuleDump, "module EEPROM dump ("+d.Format+")"
	r, notes, err := modules.FromDump(d, "paste", false)
	if err != nil {
		p.Error = err.Error()
		return
	}
	p.Notes = append(p.Notes, notes[len(d.Notes):]...)
	if r.InputOnly() {
		p.Partial = true
	}
	moduleFacts(p, r)
	p.Data = r
}

// moduleFacts turns a module report into facts and findings.
func moduleFacts(p *Part, r *modules.Report) {
	if m := r.EEPROM; m != nil {
		p.fact("module", strings.TrimSpace(m.Identifier.Name+" "+m.Standard))
		p.fact("vendor", strings.TrimSpace(m.Vendor.Name+" "+m.Vendor.PN))
		p.fact("serial", m.Vendor.SN)
		if m.Temperature != nil {
			p.fact("temperature", fmt.Sprintf("%.1f °C", m.Temperature.C))
		}
	}
	for _, v := range r.Verdicts {
		cat := v.Category
		switch cat {
		case optics.Software:
			cat = CatSoftware
		case optics.Database:
			cat = CatSoftware
		}
		sev := SevProblem
		if strings.Contains(v.Code, "warning") {
			sev = SevWarning
		}
		p.add(Finding{Severity: sev, Category: cat, What: v.Summary, Next: v.NextStep, Evidence: v.Evidence})
	}
}

func explainRegisterDump(p *Part, d *hexdump.Dump, dbs Databases) {
	if d.Register != "" {
		p.fact("register", d.Register)
	}
	if d.Bytes != nil {
		p.fact("bytes", strconv.Itoa(len(d.Bytes)))
	} else {
		p.fact("fields", strconv.Itoa(len(d.Fields)))
	}
	if d.Register != "" && dbs.Registers != nil {
		pl, err := dbs.Registers.Plan(d.Register)
		if reg, rerr := dbs.Registers.Register(d.Register); err != nil && rerr == nil {
			pl, err = dbs.Registers.RegisterPlan(reg)
		}
		if err == nil {
			b := d.Bytes
			if b == nil {
				b, err = d.Encode(pl)
			}
			if err == nil {
				if dec, err := pl.Decode(b); err == nil {
					var rows []Fact
					for _, r := range dec.Rows() {
						rows = append(rows, Fact{r.Path, r.Text})
					}
					p.Data = rows
					p.fact("decoded", fmt.Sprintf("%d fields with %s's layout (%s)", len(rows), d.Register, dbs.Registers.Revision))
					return
				}
			}
		}
	}
	p.Notes = append(p.Notes, "the dump does not name its register: decode it with cxray prm decode REGISTER (paste) -- or, for a module's memory, cxray module --file")
}

func readOSListing(p *Part, dbs Databases) {
	l, err := osmac.Parse(joinLines(p.text))
	if err != nil {
		p.Error = err.Error()
		return
	}
	p.Title = "OS interface listing (" + l.Format + ")"
	p.fact("interfaces", strconv.Itoa(len(l.Interfaces)))
	for _, in := range l.Interfaces {
		v := in.MAC
		if in.PermanentMAC != "" && in.PermanentMAC != in.MAC {
			v += " (permanent " + in.PermanentMAC + ")"
		}
		p.fact(in.Name, strings.TrimSpace(v+" "+in.Description))
		connectx := false
		for _, w := range []string{"mellanox", "connectx", "nvidia", "mlx5"} {
			connectx = connectx || strings.Contains(strings.ToLower(in.Description), w)
		}
		if in.PermanentMAC != "" && in.PermanentMAC != in.MAC {
			p.add(Finding{Severity: SevWarning, Category: CatConfig, Device: in.Name,
				What: fmt.Sprintf("%s uses %s, not its permanent MAC %s (MAC drift)", in.Name, in.MAC, in.PermanentMAC),
				Next: "if not intended (a VM, teaming, a configured address), remove the override; cxray mac --os LISTING --from FLINT-Q checks against the adapter"})
		} else if connectx && len(in.MAC) == 17 {
			if b, err := strconv.ParseUint(in.MAC[:2], 16, 8); err == nil && b&2 != 0 {
				p.add(Finding{Severity: SevWarning, Category: CatConfig, Device: in.Name,
					What: fmt.Sprintf("%s (a ConnectX) uses the locally administered address %s, set by software", in.Name, in.MAC),
					Next: "check with cxray mac --os LISTING --from FLINT-Q whether it should use the adapter's permanent MAC"})
			}
		}
	}
	p.Data = l
}

func readMonitor(p *Part, dbs Databases) {
	rec, err := monitor.ReadRecording(strings.NewReader(joinLines(p.text)))
	if err != nil {
		p.Error = err.Error()
		return
	}
	p.fact("format", rec.Format)
	p.fact("samples", strconv.Itoa(len(rec.Samples)))
	devs := map[string]bool{}
	for _, s := range rec.Samples {
		devs[s.Device] = true
		for _, a := range s.Alerts {
			p.add(Finding{Severity: SevWarning, Category: CatHardware, Device: s.Device, What: "alert fired: " + a, Next: "cxray plot FILE --what KEY shows it over time"})
		}
		for _, f := range s.Frozen {
			p.add(Finding{Severity: SevWarning, Category: CatHardware, Device: s.Device, What: "reading frozen: " + f, Next: "a monitor that does not move is a stuck sensor or module (cxray module --verify)"})
		}
		for _, e := range s.Errors {
			p.add(Finding{Severity: SevWarning, Category: CatHardware, Device: s.Device, What: "could not read: " + e})
		}
	}
	if len(rec.Samples) > 0 {
		p.fact("from", rec.Samples[0].Time.Format("2006-01-02 15:04:05"))
		p.fact("to", rec.Samples[len(rec.Samples)-1].Time.Format("2006-01-02 15:04:05"))
	}
	p.fact("devices", strconv.Itoa(len(devs)))
	if rec.TornLine {
		p.Notes = append(p.Notes, "the last line was cut (a write interrupted): left out")
	}
}

func readSnapshot(p *Part, dbs Databases) {
	f, err := snapshot.Parse(bytes.TrimSpace([]byte(joinLines(p.text))), "the paste")
	if err != nil {
		p.Error = err.Error()
		if strings.Contains(err.Error(), "cut short") {
			p.Partial = true
		}
		return
	}
	p.fact("created", f.Created.Format("2006-01-02 15:04:05"))
	p.fact("host", f.Host)
	p.fact("PRM", f.PRMRevision)
	p.fact("devices", strconv.Itoa(len(f.Devices)))
	for _, d := range f.Devices {
		failed := 0
		for _, r := range d.Registers {
			if r.Error != "" {
				failed++
			}
		}
		p.fact(d.Name, fmt.Sprintf("%s firmware %s, %d registers (%d failed)", d.Identity.Model, d.Identity.Firmware, len(d.Registers), failed))
	}
	p.Notes = append(p.Notes, "compare it with the device now: cxray diff FILE -d DEV, or with another snapshot: cxray diff A B")
}
