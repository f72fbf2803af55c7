package nvconf

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cxray/cxray/nvconf/rawfile"
)

// cxray's readable backup format (WriteBackup).
const (
	// BackupSignature starts cxray's readable backup files.
	BackupSignature = "CXRAY_NV_BACKUP"
	// backupVersion 2 ends with "end tlvs=N sha256=..." written last, so a
	// file cut short, joined or edited is refused; version 1 files (no end
	// line) are still read, as unchecked.
	backupVersion   = "2"
	backupVersionV1 = "1"
)

// BackupFile is a backup as read: its TLVs and how sure the reading is.
type BackupFile struct {
	// Format is "cxray backup" (version 2, self-checking), "cxray backup
	// version 1" or "mstflint raw TLV file".
	Format string
	TLVs   []RawTLV
	// Unchecked says nothing proves the file is whole: mstflint's format
	// and cxray's version 1 have no count or checksum, so a file cut at a
	// line boundary reads as a smaller backup. Ask before writing it.
	Unchecked bool
	// Model and PSID name the adapter the backup was taken from, when the
	// file says (cxray's format, from its "# model:" and "# psid:" lines;
	// mstflint's format does not). A TLV means what the firmware of that
	// model and PSID makes of it: restore compares them with the target.
	Model, PSID string
}

// ReadBackupFile reads a backup in any format by its first line, refusing
// a truncated, corrupt or foreign file with a FileError (Kind says which).
func ReadBackupFile(text string, hc *HeaderCodec, db *DB) (*BackupFile, error) {
	first := firstLine(text)
	switch {
	case first == RawFileSignature:
		if hc == nil {
			return nil, &FileError{Msg: "reading a raw TLV file needs the register database (MNVDA layout)"}
		}
		tlvs, checked, err := rawfile.ParseChecked(text, hc)
		if err != nil {
			return nil, err
		}
		if err := checkRawTypes(text, tlvs, db); err != nil {
			return nil, err
		}
		if checked {
			return &BackupFile{Format: "cxray raw TLV file", TLVs: tlvs}, nil
		}
		return &BackupFile{Format: "mstflint raw TLV file", TLVs: tlvs, Unchecked: true}, nil
	case strings.HasPrefix(first, BackupSignature):
		tlvs, v1, err := parseBackup(text, db)
		if err != nil {
			return nil, err
		}
		model, psid := backupOrigin(text)
		if v1 {
			return &BackupFile{Format: "cxray backup version 1", TLVs: tlvs, Unchecked: true, Model: model, PSID: psid}, nil
		}
		return &BackupFile{Format: "cxray backup", TLVs: tlvs, Model: model, PSID: psid}, nil
	}
	return nil, foreign(first)
}

// checkRawTypes refuses a raw file holding a TLV type the parameter
// database does not know: with no checksum in the format, a damaged type
// dword is otherwise read as a TLV of its own.
func checkRawTypes(text string, tlvs []RawTLV, db *DB) error {
	if db == nil {
		return nil
	}
	for _, r := range tlvs {
		if _, ok := db.InstanceOf(r.Header.Type); !ok {
			return &FileError{Line: rawTLVLine(text, r.Header.Type), Kind: FileCorrupt,
				Msg: fmt.Sprintf("TLV type 0x%08x is not in the parameter database (%s): the file is damaged, or from an adapter this database does not describe", r.Header.Type, db.Source),
				Fix: "nothing was written: use a complete backup, or a newer parameter database (--nvdb)"}
		}
	}
	return nil
}

// rawTLVLine finds the data line of type t in a raw file, for messages.
func rawTLVLine(text string, t uint32) int {
	want := fmt.Sprintf("0x%08x", t)
	for i, l := range strings.Split(text, "\n") {
		if f := strings.Fields(l); len(f) >= 2 && !strings.HasPrefix(f[0], "%") && strings.EqualFold(f[1], want) {
			return i + 1
		}
	}
	return 0
}

func firstLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(strings.TrimPrefix(l, "\ufeff")); l != "" {
			return l
		}
	}
	return ""
}

// foreign explains a file that is no backup.
func foreign(first string) error {
	what := "its first line is " + strconv.Quote(first)
	switch {
	case first == "":
		what = "it is empty"
	case strings.HasPrefix(first, "{") || strings.HasPrefix(first, "["):
		what = "it is JSON (a snapshot or another tool's output?)"
	case strings.HasPrefix(first, "Device #") || strings.HasPrefix(first, "Device type:"):
		what = "it is an mlxconfig/mstconfig query output; 'cxray config diff' reads those, restore needs a backup"
	}
	if len(what) > 120 {
		what = what[:120] + "…"
	}
	return &FileError{Kind: FileForeign, Msg: "not an NV backup: " + what,
		Fix: "a cxray backup starts with " + BackupSignature + ", mstconfig's with " + RawFileSignature + "; nothing was written"}
}

// ParseFile reads a backup in either format (by its first line). Use
// ReadBackupFile to learn whether the file could be checked.
func ParseFile(text string, hc *HeaderCodec, db *DB) ([]RawTLV, error) {
	b, err := ReadBackupFile(text, hc, db)
	if err != nil {
		return nil, err
	}
	return b.TLVs, nil
}

// BackupInfo is what a readable backup says about where it came from.
type BackupInfo struct {
	// Model and PSID of the adapter, written as "# model:" and "# psid:"
	// lines that ReadBackupFile gives back (BackupFile.Model, PSID).
	Model, PSID string
	Lines       []string // free-form "key: value" lines written as comments
}

// backupOrigin reads the "# model:" and "# psid:" lines of a cxray backup's
// head (the comments before the first TLV); the first of each counts.
func backupOrigin(text string) (model, psid string) {
	for i, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if i > 0 && !strings.HasPrefix(l, "#") && l != "" {
			break // the first TLV: the head is over
		}
		if v, ok := strings.CutPrefix(l, "# model:"); ok && model == "" {
			model = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(l, "# psid:"); ok && psid == "" {
			psid = strings.TrimSpace(v)
		}
	}
	return model, psid
}

// oneLine keeps a value on its comment line.
func oneLine(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s))
}

// WriteBackup writes cxray's readable backup format:
//
//	CXRAY_NV_BACKUP 2
//	# comments: where it came from, and each parameter decoded
//	tlv 0x00000080 nv_global_pci_conf version=0 writer=ICMD_mlxconfig length=12
//	data 0x80000000 0x00080000 0x00000000
//	end tlvs=1 sha256=...
//
// The tlv and data lines are what restore writes; the comments say what the
// data means, for people reading or comparing backups. The end line, last,
// counts the TLVs and carries a checksum of them (not of the comments), so
// a reader can tell a whole file from a cut, joined or edited one.
func WriteBackup(tlvs []RawTLV, db *DB, hc *HeaderCodec, info BackupInfo) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s\n", BackupSignature, backupVersion)
	b.WriteString("# cxray NV configuration backup. 'cxray config restore FILE' writes it back;\n")
	b.WriteString("# the tlv and data lines are the configuration, '#' lines only explain it.\n")
	if m := oneLine(info.Model); m != "" {
		fmt.Fprintf(&b, "# model: %s\n", m)
	}
	if p := oneLine(info.PSID); p != "" {
		fmt.Fprintf(&b, "# psid: %s\n", p)
	}
	for _, l := range info.Lines {
		fmt.Fprintf(&b, "# %s\n", l)
	}
	fmt.Fprintf(&b, "# %d TLV(s)\n", len(tlvs))
	for _, r := range tlvs {
		name := ""
		var in Instance
		known := false
		if db != nil {
			in, known = db.InstanceOf(r.Header.Type)
		}
		if known {
			name = " " + in.TLV.Name
		}
		writer := fmt.Sprintf("0x%x", r.Header.WriterID)
		if hc != nil {
			writer = hc.WriterName(r.Header.WriterID)
			if strings.HasPrefix(writer, "writer ") {
				writer = fmt.Sprintf("0x%x", r.Header.WriterID)
			}
		}
		fmt.Fprintf(&b, "\ntlv 0x%08x%s version=%d writer=%s length=%d", r.Header.Type, name, r.Header.Version, writer, len(r.Data))
		if r.Header.WriterHost != 0 {
			fmt.Fprintf(&b, " host=%d", r.Header.WriterHost)
		}
		b.WriteString("\n")
		if known {
			fmt.Fprintf(&b, "# %s\n", describeInstance(in))
		}
		b.WriteString("data")
		for i := 0; i < len(r.Data); i += 4 {
			var w [4]byte
			copy(w[:], r.Data[i:])
			fmt.Fprintf(&b, " 0x%08x", binary.BigEndian.Uint32(w[:]))
		}
		b.WriteString("\n")
		if known && len(r.Data) >= in.TLV.Size {
			for _, l := range DecodeLines(in, r.Data) {
				fmt.Fprintf(&b, "#   %s\n", l)
			}
		}
	}
	fmt.Fprintf(&b, "\nend tlvs=%d sha256=%x\n", len(tlvs), rawfile.Sum(tlvs))
	return b.Bytes()
}

func describeInstance(in Instance) string {
	s := fmt.Sprintf("%s, class %s", in, in.TLV.Class)
	if in.TLV.Title != "" {
		s += ", " + strings.ToLower(in.TLV.Title)
	}
	return s
}

// DecodeLines renders each parameter of a TLV's data ("NAME = value"),
// user-visible names first; internal fields are shown when non-zero.
func DecodeLines(in Instance, data []byte) []string {
	var out []string
	for _, p := range in.TLV.Params {
		if p.MlxName == "" {
			continue
		}
		if p.IsArray() {
			vals := make([]string, p.ArrayLen)
			for i := range vals {
				vals[i] = p.FormatData(data, i)
			}
			out = append(out, fmt.Sprintf("%s%s = [%s]", p.MlxName, in.Suffix(), strings.Join(vals, " ")))
			continue
		}
		line := fmt.Sprintf("%s%s = %s", p.MlxName, in.Suffix(), p.FormatData(data, 0))
		if !p.ValidBitSet(data) {
			line += " (not set: valid bit " + p.ValidBit + " is 0, the default applies)"
		}
		out = append(out, line)
	}
	for _, p := range in.TLV.Params {
		if p.MlxName != "" || p.Type == TypeString || p.Type == TypeBytes || p.IsArray() {
			continue
		}
		if v, err := p.Get(data, 0); err == nil && v != 0 {
			out = append(out, fmt.Sprintf("%s = %s", p.Name, p.Format(v)))
		}
	}
	return out
}

// ParseBackup reads cxray's readable backup format. A TLV name on the tlv
// line must match what the database calls the type, so a hand edit that
// moved a block is caught. A version 2 file must end with its end line and
// match its count and checksum.
func ParseBackup(text string, db *DB) ([]RawTLV, error) {
	tlvs, _, err := parseBackup(text, db)
	return tlvs, err
}

func parseBackup(text string, db *DB) ([]RawTLV, bool, error) {
	tlvs, v1, err := parseBackupLines(text, db)
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) && fe.Kind == "" && fe.Fix == "" {
			fe.Fix = rawfile.FixBackup
		}
	}
	return tlvs, v1, err
}

func parseBackupLines(text string, db *DB) ([]RawTLV, bool, error) {
	if len(text) > MaxFileSize {
		return nil, false, &FileError{Msg: fmt.Sprintf("file of %d bytes; at most %d", len(text), MaxFileSize)}
	}
	v1 := false
	var end *rawfile.End
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), MaxFileSize)
	var out []RawTLV
	var cur *RawTLV
	length := -1
	line := 0
	sawSig := false
	finish := func() error {
		if cur == nil {
			return nil
		}
		if cur.Data == nil {
			return &FileError{Line: line, Msg: fmt.Sprintf("TLV 0x%08x has no data line", cur.Header.Type)}
		}
		if length >= 0 {
			if length > len(cur.Data) {
				return &FileError{Line: line, Msg: fmt.Sprintf("TLV 0x%08x: length=%d but the data line has %d bytes", cur.Header.Type, length, len(cur.Data))}
			}
			cur.Data = cur.Data[:length]
		}
		cur.Header.Length = len(cur.Data)
		out = append(out, *cur)
		cur = nil
		return nil
	}
	for sc.Scan() {
		line++
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		if !sawSig {
			if f[0] != BackupSignature {
				return nil, false, foreign(l)
			}
			switch {
			case len(f) >= 2 && f[1] == backupVersion:
				if !strings.Contains(text, "\nend ") {
					return nil, false, &FileError{Kind: FileTruncated, Msg: "the backup has no end line: it was cut short (an interrupted write, a full disk, a partial copy)", Fix: rawfile.FixBackup}
				}
			case len(f) >= 2 && f[1] == backupVersionV1:
				v1 = true
			default:
				return nil, false, &FileError{Line: line, Msg: fmt.Sprintf("backup format version %q; this cxray reads versions %s and %s", strings.Join(f[1:], " "), backupVersionV1, backupVersion)}
			}
			sawSig = true
			continue
		}
		if end != nil {
			return nil, false, &FileError{Line: line, Kind: FileCorrupt, Msg: "lines after the end line (two backups joined, or an edit)", Fix: rawfile.FixBackup}
		}
		switch f[0] {
		case "end":
			if v1 {
				return nil, false, &FileError{Line: line, Msg: "an end line in a version 1 backup"}
			}
			if err := finish(); err != nil {
				return nil, false, err
			}
			e, err := rawfile.ParseEnd(f[1:])
			if err != nil {
				return nil, false, &FileError{Line: line, Kind: FileCorrupt, Msg: err.Error(), Fix: rawfile.FixBackup}
			}
			e.Line = line
			end = e
			continue
		case "tlv":
			if err := finish(); err != nil {
				return nil, false, err
			}
			if len(out) >= MaxFileTLVs {
				return nil, false, &FileError{Line: line, Msg: fmt.Sprintf("more than %d TLVs", MaxFileTLVs)}
			}
			if len(f) < 2 {
				return nil, false, &FileError{Line: line, Msg: "tlv needs a type dword: tlv 0x00000080 [name] [version=N] [writer=NAME]"}
			}
			t, err := strconv.ParseUint(f[1], 0, 32)
			if err != nil {
				return nil, false, &FileError{Line: line, Msg: fmt.Sprintf("%q is not a type dword (0x00000080)", f[1])}
			}
			cur = &RawTLV{Header: Header{Type: uint32(t), WriterID: WriterUnspecified}}
			length = -1
			for _, kv := range f[2:] {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					if db == nil {
						continue
					}
					if in, known := db.InstanceOf(cur.Header.Type); known && !strings.EqualFold(in.TLV.Name, kv) {
						return nil, false, &FileError{Line: line, Msg: fmt.Sprintf("type 0x%08x is %s, but the line names %s; fix the type or the name", t, in.TLV.Name, kv)}
					}
					continue
				}
				switch k {
				case "version":
					n, err := strconv.ParseUint(v, 0, 4)
					if err != nil {
						return nil, false, &FileError{Line: line, Msg: fmt.Sprintf("version=%s: a version is 0..15", v)}
					}
					cur.Header.Version = int(n)
				case "writer":
					w, ok := parseWriter(v)
					if !ok {
						return nil, false, &FileError{Line: line, Msg: fmt.Sprintf("writer=%s: give a writer name (ICMD_mlxconfig) or number 0x0..0x1f", v)}
					}
					cur.Header.WriterID = w
				case "length":
					n, err := strconv.ParseUint(v, 0, 16)
					if err != nil || n > MaxData {
						return nil, false, &FileError{Line: line, Msg: fmt.Sprintf("length=%s: 0..%d bytes", v, MaxData)}
					}
					length = int(n)
				case "host":
					n, err := strconv.ParseUint(v, 0, 3)
					if err != nil {
						return nil, false, &FileError{Line: line, Msg: fmt.Sprintf("host=%s: 0..7", v)}
					}
					cur.Header.WriterHost = int(n)
				default:
					return nil, false, &FileError{Line: line, Msg: fmt.Sprintf("unknown key %q (version, writer, length, host)", k)}
				}
			}
		case "data":
			if cur == nil {
				return nil, false, &FileError{Line: line, Msg: "data before any tlv line"}
			}
			if cur.Data != nil {
				return nil, false, &FileError{Line: line, Msg: "a second data line for one TLV; put all dwords on one line"}
			}
			if (len(f)-1)*4 > MaxData {
				return nil, false, &FileError{Line: line, Msg: fmt.Sprintf("%d dwords; a TLV holds at most %d bytes", len(f)-1, MaxData)}
			}
			cur.Data = make([]byte, 0, 4*(len(f)-1))
			for _, t := range f[1:] {
				v, err := strconv.ParseUint(t, 0, 32)
				if err != nil {
					return nil, false, &FileError{Line: line, Msg: fmt.Sprintf("%q is not a 32-bit number", t)}
				}
				cur.Data = binary.BigEndian.AppendUint32(cur.Data, uint32(v))
			}
		default:
			return nil, false, &FileError{Line: line, Msg: fmt.Sprintf("unknown line %q (tlv, data, or # comments)", f[0])}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, false, &FileError{Msg: err.Error()}
	}
	if !sawSig {
		return nil, false, foreign("")
	}
	if err := finish(); err != nil {
		return nil, false, err
	}
	if v1 {
		return out, true, nil
	}
	if end == nil {
		return nil, false, &FileError{Kind: FileTruncated, Msg: "the backup has no end line: it was cut short", Fix: rawfile.FixBackup}
	}
	if err := end.Verify(out, "the TLVs do not match the backup's checksum: the file was changed or damaged after cxray wrote it"); err != nil {
		return nil, false, err
	}
	return out, false, nil
}

// writerNames are the writer IDs of the configuration-item header by the
// names backups use; the PRM database's enum is preferred when a codec is
// at hand (WriteBackup), these let a file be read without one.
var writerNames = map[string]uint8{
	"UNSPECIFIED": 0x0, "CHASSIS_BMC": 0x1, "MAD": 0x2, "BMC": 0x3, "COMMAND_INTERFACE": 0x4, "ICMD": 0x5,
	"ICMD_UEFI_HII": 0x6, "ICMD_UEFI_CLP": 0x7, "ICMD_FLEXBOOT": 0x8, "ICMD_MLXCONFIG": 0x9, "ICMD_USER1": 0xA,
	"ICMD_USER2": 0xB, "ICMD_MLXCONFIG_SET_RAW": 0xC, "ICMD_FLEXBOOT_CLP": 0xD, "BMC_APP1": 0x10, "BMC_APP2": 0x11,
	"BMP_APP3": 0x12, "BMC_APP3": 0x12, "OTHER": 0x1F,
}

func parseWriter(s string) (uint8, bool) {
	if v, ok := writerNames[strings.ToUpper(s)]; ok {
		return v, true
	}
	v, err := strconv.ParseUint(s, 0, 8)
	if err != nil || v > 0x1F {
		return 0, false
	}
	return uint8(v), true
}
