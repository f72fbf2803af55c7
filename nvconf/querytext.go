package nvconf

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/cxray/cxray/internal/lazyre"
	"github.com/cxray/cxray/nvconf/querytext"
)

// Reading mlxconfig and mstconfig outputs as evidence: operators on
// Windows (WinMFT) and on locked-down hosts bring the text of `mlxconfig -d
// DEV q` (with or without -e) or a `mlxconfig ... backup` file, not a device.
// package querytext reads the text; here its rows are named through the
// database and become the model Query returns. The tests read outputs of
// mstconfig 4.21 captured on the emulator.

// QueryText is one device of a query output, in the model Query returns.
type QueryText struct {
	DeviceType  string `json:"device_type"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Device      string `json:"device"`
	// Columns are the value columns the output had, in order: ["Next
	// Boot"], or ["Default", "Current", "Next Boot"] with -e.
	Columns []string `json:"columns"`
	// Result holds one Setting per parameter line. Settings whose name the
	// database does not know have a zero Ref (Ref.Param is nil).
	Result *QueryResult `json:"-"`
	// Unknown lists the parameter names the database does not know.
	Unknown []string `json:"unknown,omitempty"`
	// Notes say what was odd: a value that does not match its parameter's
	// values in the database, a star that disagrees with the columns.
	Notes []string `json:"notes,omitempty"`
}

// QueryTextError is a query output that cannot be read, with the line.
type QueryTextError = querytext.Error

// IsQueryText says whether text looks like an mlxconfig/mstconfig query
// output (it has the "Configurations:" heading).
func IsQueryText(text string) bool { return querytext.Is(text) }

var labelValue = lazyre.New(`^(.*)\((-?[0-9]+)\)$`)

// ParseQueryText reads the query outputs in text, one QueryText per
// device (querytext.Parse says what it accepts), resolving parameter names
// through db (which may be nil: the settings then keep their names only).
// mlxconfig set's confirmation table ("Next Boot  New") reads New as Next
// Boot, the values the set writes; a `| grep` fragment without its
// heading is read when one of its rows names a parameter db knows.
func ParseQueryText(text string, db *DB) ([]QueryText, error) {
	if len(text) > MaxFileSize {
		return nil, &QueryTextError{Msg: fmt.Sprintf("%d bytes; a query output is at most %d", len(text), MaxFileSize)}
	}
	var known func(string) bool
	if db != nil {
		known = func(name string) bool {
			_, err := db.Resolve(name, Layout{Ports: 2})
			return err == nil
		}
	}
	ts, err := querytext.Parse(text, known)
	if err != nil {
		return nil, err
	}
	out := make([]QueryText, len(ts))
	for i, t := range ts {
		q := &out[i]
		*q = QueryText{DeviceType: t.DeviceType, Name: t.Name, Description: t.Description, Device: t.Device, Columns: t.Columns, Notes: t.Notes}
		q.Result = buildResult(q, t.Rows, db)
		if t.SetTable {
			setTableResult(q)
		}
		q.Notes = append(q.Notes, t.After...)
	}
	return out, nil
}

// setTableResult turns mlxconfig set's confirmation table ("Next Boot
// New") into the model: the New column is what Next Boot holds once the set
// was applied; the Next Boot column before it is kept in the notes.
func setTableResult(q *QueryText) {
	q.Columns = []string{"Next Boot"}
	q.Notes = append(q.Notes, "an mlxconfig set confirmation table: its New column is read as Next Boot (what the set writes, once applied)")
	for i := range q.Result.Settings {
		s := &q.Result.Settings[i]
		old := s.Current
		s.Current, s.Pending, s.Modified = nil, false, false
		if old != nil && !sameValue(old, s.Next) {
			q.Notes = append(q.Notes, fmt.Sprintf("%s: Next Boot %s before the set, %s after", s.Name, old.Text, s.Next.Text))
		}
	}
	q.Result.ReadCurrent = false
}

// parseValue reads one printed value: Label(n), a number, 0x.., N/A, or
// text (a STRING parameter, "Array[0..3]").
func parseValue(s string, p *Param) *Value {
	v := &Value{Text: s}
	if s == "N/A" || s == "" {
		return v
	}
	num := s
	if m := labelValue.FindStringSubmatch(s); m != nil {
		num = m[2]
	}
	if n, err := strconv.ParseInt(num, 0, 64); err == nil && n < 0 {
		u := uint64(n)
		if p != nil && p.ElemBits() > 0 && p.ElemBits() < 64 {
			u &= 1<<uint(p.ElemBits()) - 1
		}
		v.Raw, v.Numeric = u, true
	} else if u, err := strconv.ParseUint(num, 0, 64); err == nil {
		v.Raw, v.Numeric = u, true
	}
	return v
}

// buildResult turns rows into Settings, naming them through db.
func buildResult(q *QueryText, rows []querytext.Row, db *DB) *QueryResult {
	res := &QueryResult{Settings: []Setting{}, Extended: len(q.Columns) == 3}
	res.ReadDefault, res.ReadCurrent = res.Extended, len(q.Columns) >= 2
	layout := layoutOf(rows)
	for _, r := range rows {
		s := Setting{Name: r.Name}
		var p *Param
		if db != nil {
			if ref, err := db.Resolve(r.Name, layout); err == nil {
				s.Ref, s.TLV, s.Instance = ref, ref.Param.TLV.Name, ref.Inst.String()
				s.Name = ref.Name()
				p = ref.Param
			} else {
				q.Unknown = append(q.Unknown, r.Name)
			}
		}
		for i, c := range q.Columns {
			v := parseValue(r.Values[i], p)
			switch c {
			case "Default":
				s.Default = v
			case "Current":
				s.Current = v
			case "Next Boot":
				s.Next = v
			}
			if p != nil {
				if note := checkValue(p, s.Name, c, v); note != "" {
					q.Notes = append(q.Notes, fmt.Sprintf("line %d: %s", r.Line, note))
				}
			}
		}
		s.Modified = r.Star
		if s.Default != nil {
			s.Modified = !sameValue(s.Next, s.Default)
		}
		if s.Current != nil {
			s.Pending = !sameValue(s.Next, s.Current)
		}
		if res.Extended && r.Star != (s.Modified || s.Pending) {
			q.Notes = append(q.Notes, fmt.Sprintf("line %d: %s: the '*' mark disagrees with its columns", r.Line, r.Name))
		}
		res.Settings = append(res.Settings, s)
	}
	return res
}

// maxTextInstances bounds the ports and modules a text may name.
const maxTextInstances = 256

// layoutOf guesses the ports and modules from the names' suffixes, so
// LINK_TYPE_P2 resolves on a dual-port device.
func layoutOf(rows []querytext.Row) Layout {
	l := Layout{Ports: 1}
	for _, r := range rows {
		base := r.Name
		if m := indexRE.FindStringSubmatch(base); m != nil {
			base = m[1]
		}
		if m := suffixRE.FindStringSubmatch(strings.ToUpper(base)); m != nil {
			n, _ := strconv.Atoi(m[3])
			if n > maxTextInstances {
				continue // not a port or module any device has
			}
			if m[2] == "P" && n > l.Ports {
				l.Ports = n
			}
			if m[2] == "M" && n+1 > l.Modules {
				l.Modules = n + 1
			}
		}
	}
	return l
}

func sameValue(a, b *Value) bool {
	switch {
	case a == nil || b == nil:
		return a == b
	case a.Numeric && b.Numeric:
		return a.Raw == b.Raw
	}
	return a.Text == b.Text
}

// checkValue says when a printed value does not fit its parameter: an enum
// label of another value, a number outside the field.
func checkValue(p *Param, name, col string, v *Value) string {
	if !v.Numeric {
		return ""
	}
	if p.ElemBits() < 64 && v.Raw>>uint(p.ElemBits()) != 0 {
		return fmt.Sprintf("%s %s = %s does not fit its %d bits", name, col, v.Text, p.ElemBits())
	}
	if m := labelValue.FindStringSubmatch(v.Text); m != nil && (p.Type == TypeEnum || p.Type == TypeBool) {
		if want := p.Format(v.Raw); want != v.Text && !strings.EqualFold(want, v.Text) {
			return fmt.Sprintf("%s %s = %s, but the database calls %d %s (another database version?)", name, col, v.Text, v.Raw, want)
		}
	}
	return ""
}

// SettingsFromTLVs decodes stored TLVs (a backup, mstconfig's or cxray's)
// into the settings they hold, as Next Boot values: what the device would
// boot with. TLVs the database does not know are listed by type.
func SettingsFromTLVs(tlvs []RawTLV, db *DB) (*QueryResult, []string) {
	res := &QueryResult{Settings: []Setting{}}
	var unknown []string
	for _, r := range tlvs {
		in, ok := db.InstanceOf(r.Header.Type)
		if !ok {
			unknown = append(unknown, fmt.Sprintf("0x%08x", r.Header.Type))
			continue
		}
		data := r.Data
		if len(data) < in.TLV.Size {
			data = append(append([]byte(nil), data...), make([]byte, in.TLV.Size-len(data))...)
		}
		for _, p := range in.TLV.Params {
			if p.MlxName == "" {
				continue
			}
			n := 1
			if p.IsArray() {
				n = p.ArrayLen
			}
			for i := 0; i < n; i++ {
				ref := Ref{Param: p, Inst: in, Index: -1}
				if p.IsArray() {
					ref.Index = i
				}
				v := &Value{Text: p.FormatData(data, i), Defaulted: !p.ValidBitSet(data)}
				if p.Type != TypeString && p.Type != TypeBytes {
					if u, err := p.Get(data, i); err == nil {
						v.Raw, v.Numeric = u, true
					}
				}
				res.Settings = append(res.Settings, Setting{Ref: ref, Name: ref.Name(), TLV: in.TLV.Name, Instance: in.String(), Next: v})
			}
		}
	}
	sort.SliceStable(res.Settings, func(i, j int) bool { return res.Settings[i].Name < res.Settings[j].Name })
	return res, unknown
}

// ConfigFile is an NV configuration read from a file: a query output or a
// backup.
type ConfigFile struct {
	// Kind is "query" (mlxconfig/mstconfig q), or the backup's format
	// (BackupFile.Format).
	Kind    string
	Devices []QueryText // query outputs
	TLVs    []RawTLV    // backups
	// Result is the configuration: the query's settings (of its first
	// device), or the settings a backup's TLVs hold (as Next Boot).
	Result *QueryResult
	// Unchecked marks a backup without a checksum (mstflint's format):
	// nothing proves it is whole; ask before writing it.
	Unchecked bool
	Notes     []string
}

// ReadConfigFile reads an NV configuration file in any of the forms people
// bring: an mlxconfig/mstconfig query output, mstconfig's backup (raw TLV
// file) or cxray's backup. hc (the MNVDA layout) is needed for raw files.
func ReadConfigFile(text string, db *DB, hc *HeaderCodec) (*ConfigFile, error) {
	return ReadConfigFileDevice(text, db, hc, "")
}

// MultiDeviceError is a query output of several devices (WinMFT lists
// every one) read without saying which one is meant.
type MultiDeviceError struct {
	Devices []string // "1: 0000:03:00.0 (ConnectX7)", in order
}

func (e *MultiDeviceError) Error() string {
	return fmt.Sprintf("the output holds %d devices: %s; say which one (its number or its Device name)", len(e.Devices), strings.Join(e.Devices, "; "))
}

// DeviceLabels lists a query output's devices as MultiDeviceError does.
func DeviceLabels(qs []QueryText) []string {
	var out []string
	for i, q := range qs {
		l := fmt.Sprintf("%d: %s", i+1, cmpOr(q.Device, q.Name, "(no Device line)"))
		if q.DeviceType != "" {
			l += " (" + q.DeviceType + ")"
		}
		out = append(out, l)
	}
	return out
}

func cmpOr(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// PickDevice chooses one device of a query output: by number from 1, or by
// its Device or Name line (a suffix: "03:00.0" finds "0000:03:00.0").
func PickDevice(qs []QueryText, device string) (int, error) {
	if n, err := strconv.Atoi(device); err == nil {
		if n < 1 || n > len(qs) {
			return 0, fmt.Errorf("device %d: the output holds devices 1..%d (%s)", n, len(qs), strings.Join(DeviceLabels(qs), "; "))
		}
		return n - 1, nil
	}
	found := -1
	for i, q := range qs {
		for _, v := range []string{q.Device, q.Name} {
			if v != "" && (strings.EqualFold(v, device) || strings.HasSuffix(strings.ToLower(v), strings.ToLower(device))) {
				if found >= 0 && found != i {
					return 0, fmt.Errorf("%q names more than one device of the output (%s); give its number", device, strings.Join(DeviceLabels(qs), "; "))
				}
				found = i
			}
		}
	}
	if found < 0 {
		return 0, fmt.Errorf("no device %q in the output; it holds %s", device, strings.Join(DeviceLabels(qs), "; "))
	}
	return found, nil
}

func queryFile(qs []QueryText, device string) (*ConfigFile, error) {
	i := 0
	switch {
	case device != "" && len(qs) == 1 && qs[0].Device == "" && qs[0].Name == "":
		// A fragment names no device: it is the one meant.
	case device != "":
		var err error
		if i, err = PickDevice(qs, device); err != nil {
			return nil, err
		}
	case len(qs) > 1:
		return nil, &MultiDeviceError{Devices: DeviceLabels(qs)}
	}
	q := qs[i]
	cf := &ConfigFile{Kind: "query", Devices: []QueryText{q}, Result: q.Result}
	if len(qs) > 1 {
		cf.Notes = append(cf.Notes, fmt.Sprintf("device %d of %d (%s)", i+1, len(qs), cmpOr(q.Device, q.Name)))
	}
	for _, u := range q.Unknown {
		cf.Notes = append(cf.Notes, "unknown to the parameter database: "+u)
	}
	cf.Notes = append(cf.Notes, q.Notes...)
	return cf, nil
}

// ReadConfigFileDevice is ReadConfigFile for one device of a query output
// that holds several: device is its number (from 1) or its Device name; ""
// when the output must hold one device (several are a MultiDeviceError).
func ReadConfigFileDevice(text string, db *DB, hc *HeaderCodec, device string) (*ConfigFile, error) {
	switch {
	case IsQueryText(text):
		qs, err := ParseQueryText(text, db)
		if err != nil {
			return nil, err
		}
		return queryFile(qs, device)
	}
	b, err := ReadBackupFile(text, hc, db)
	if err != nil {
		// A `| grep` fragment of a query has no heading: read it as one
		// when it is not a backup.
		if qs, qerr := ParseQueryText(text, db); qerr == nil {
			return queryFile(qs, device)
		}
		return nil, err
	}
	cf := &ConfigFile{Kind: b.Format, TLVs: b.TLVs, Unchecked: b.Unchecked}
	cf.finishTLVs(db)
	return cf, nil
}

func (cf *ConfigFile) finishTLVs(db *DB) {
	if db == nil {
		cf.Result = &QueryResult{Settings: []Setting{}}
		return
	}
	res, unknown := SettingsFromTLVs(cf.TLVs, db)
	cf.Result = res
	for _, u := range unknown {
		cf.Notes = append(cf.Notes, "TLV type "+u+" is not in the parameter database; kept, not decoded")
	}
}

// SettingChange is one parameter that differs between two configurations.
type SettingChange struct {
	Name   string `json:"name"`
	TLV    string `json:"tlv,omitempty"`
	Column string `json:"column"` // "Next Boot", "Current" or "Default"
	Old    string `json:"old"`    // "" when only in the second
	New    string `json:"new"`    // "" when only in the first
	// Only is "a" or "b" when one side lacks the parameter altogether (a
	// short query output against a device): "" values then mean absent,
	// never 0.
	Only string `json:"only,omitempty"`
}

// CompareSettings lists the parameters whose values differ between a and
// b, by name: Next Boot always, Current and Default where both have them.
// A parameter in one only is a change from or to "".
func CompareSettings(a, b *QueryResult) []SettingChange {
	idx := func(r *QueryResult) map[string]*Setting {
		m := map[string]*Setting{}
		for i := range r.Settings {
			m[strings.ToUpper(r.Settings[i].Name)] = &r.Settings[i]
		}
		return m
	}
	ma, mb := idx(a), idx(b)
	var names []string
	for k := range ma {
		names = append(names, k)
	}
	for k := range mb {
		if ma[k] == nil {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	text := func(v *Value) string {
		if v == nil {
			return ""
		}
		return v.Text
	}
	var out []SettingChange
	for _, k := range names {
		x, y := ma[k], mb[k]
		name, tlv := k, ""
		for _, s := range []*Setting{x, y} {
			if s != nil {
				name, tlv = s.Name, s.TLV
			}
		}
		pick := func(s *Setting, col string) *Value {
			switch {
			case s == nil:
				return nil
			case col == "Current":
				return s.Current
			case col == "Default":
				return s.Default
			}
			return s.Next
		}
		for _, col := range []string{"Next Boot", "Current", "Default"} {
			va, vb := pick(x, col), pick(y, col)
			if col != "Next Boot" && (va == nil || vb == nil) {
				continue
			}
			if !sameValue(va, vb) {
				c := SettingChange{Name: name, TLV: tlv, Column: col, Old: text(va), New: text(vb)}
				switch {
				case x == nil:
					c.Only = "b"
				case y == nil:
					c.Only = "a"
				}
				out = append(out, c)
			}
		}
	}
	return out
}
