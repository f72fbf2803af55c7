package nvconf

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// RawTLV is one stored TLV: its header and data, as a backup holds it.
type RawTLV struct {
	Header Header
	// HeaderImage is the 12-byte header as the device or file gave it (nil
	// when built from fields); raw files reproduce it verbatim.
	HeaderImage []byte
	Data        []byte
}

// Equal says whether two TLVs hold the same configuration: type, version
// and data (the writer is who wrote it, not what it says).
func (r RawTLV) Equal(o RawTLV) bool {
	return r.Header.Type == o.Header.Type && r.Header.Version == o.Header.Version && bytes.Equal(r.Data, o.Data)
}

// Image is the header and data as one buffer (header from HeaderImage, or
// encoded through the MNVDA layout).
func (r RawTLV) Image(hc *HeaderCodec) ([]byte, error) {
	hdr := r.HeaderImage
	if len(hdr) != HeaderSize {
		buf := make([]byte, max(hc.Plan.Bytes, hc.HeaderOffset()+HeaderSize))
		h := r.Header
		h.Length = len(r.Data)
		if err := hc.EncodeHeader(buf, h); err != nil {
			return nil, err
		}
		hdr = buf[hc.HeaderOffset() : hc.HeaderOffset()+HeaderSize]
	}
	return append(append([]byte(nil), hdr...), r.Data...), nil
}

// File formats.
const (
	// RawFileSignature starts mstflint's raw TLV files (mstconfig backup,
	// set_raw, get_raw).
	RawFileSignature = "MLNX_RAW_TLV_FILE"
	// BackupSignature starts cxray's readable backup files.
	BackupSignature = "CXRAY_NV_BACKUP"
	backupVersion   = "1"
)

// Limits on files read.
const (
	MaxFileSize = 4 << 20
	MaxFileTLVs = 4096
	maxRawBytes = HeaderSize + MaxData // one NVDA image
)

// FileError reports a malformed backup or raw file with the line.
type FileError struct {
	Line int
	Msg  string
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// IsRawFile says whether text is in mstflint's raw TLV format.
func IsRawFile(text string) bool {
	first, _, _ := strings.Cut(strings.TrimLeft(text, " \t\r\n"), "\n")
	return strings.TrimSpace(first) == RawFileSignature
}

// ParseFile reads a backup in either format (by its first line).
func ParseFile(text string, hc *HeaderCodec, db *DB) ([]RawTLV, error) {
	if IsRawFile(text) {
		return ParseRawFile(text, hc)
	}
	return ParseBackup(text, db)
}

// ParseRawFile reads mstflint's raw TLV format: the signature line, '%'
// comment lines, and one line per TLV of dwords (header then data) in any
// base strtoul accepts. As mstconfig checks, the data must be exactly the
// header's length.
func ParseRawFile(text string, hc *HeaderCodec) ([]RawTLV, error) {
	if len(text) > MaxFileSize {
		return nil, &FileError{Msg: fmt.Sprintf("file of %d bytes; at most %d", len(text), MaxFileSize)}
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), MaxFileSize)
	var out []RawTLV
	line := 0
	sawSig := false
	for sc.Scan() {
		line++
		l := strings.TrimSpace(sc.Text())
		if !sawSig {
			if l == "" {
				continue
			}
			if l != RawFileSignature {
				return nil, &FileError{Line: line, Msg: fmt.Sprintf("not a raw TLV file: the first line must be %s", RawFileSignature)}
			}
			sawSig = true
			continue
		}
		if l == "" || l[0] == '%' {
			continue
		}
		toks := strings.Fields(l)
		if len(toks)*4 > maxRawBytes {
			return nil, &FileError{Line: line, Msg: fmt.Sprintf("%d dwords; a TLV is at most %d bytes with its header", len(toks), maxRawBytes)}
		}
		img := make([]byte, 0, 4*len(toks))
		for _, t := range toks {
			v, err := strconv.ParseUint(t, 0, 32)
			if err != nil {
				return nil, &FileError{Line: line, Msg: fmt.Sprintf("%q is not an unsigned 32-bit number", t)}
			}
			img = binary.BigEndian.AppendUint32(img, uint32(v))
		}
		if len(img) < HeaderSize {
			return nil, &FileError{Line: line, Msg: "a TLV line needs at least the 3 header dwords"}
		}
		r, err := rawFromImage(img, hc)
		if err != nil {
			return nil, &FileError{Line: line, Msg: err.Error()}
		}
		if len(out) >= MaxFileTLVs {
			return nil, &FileError{Line: line, Msg: fmt.Sprintf("more than %d TLVs", MaxFileTLVs)}
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, &FileError{Msg: err.Error()}
	}
	if !sawSig {
		return nil, &FileError{Msg: "empty file; a raw TLV file starts with " + RawFileSignature}
	}
	return out, nil
}

// rawFromImage splits header+data and checks the length.
func rawFromImage(img []byte, hc *HeaderCodec) (RawTLV, error) {
	buf := make([]byte, max(hc.Plan.Bytes, hc.HeaderOffset()+HeaderSize))
	copy(buf[hc.HeaderOffset():], img[:HeaderSize])
	h := hc.DecodeHeader(buf)
	if n := len(img) - HeaderSize; n != h.Length {
		return RawTLV{}, fmt.Errorf("TLV size mismatch: the header says %d data bytes, the line carries %d", h.Length, n)
	}
	return RawTLV{Header: h, HeaderImage: append([]byte(nil), img[:HeaderSize]...), Data: append([]byte(nil), img[HeaderSize:]...)}, nil
}

// WriteRawFile writes TLVs in mstflint's raw format, as mstconfig backup
// does: a comment line per TLV naming type and writer, then its dwords.
func WriteRawFile(tlvs []RawTLV, hc *HeaderCodec) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(RawFileSignature + "\n")
	for _, r := range tlvs {
		img, err := r.Image(hc)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%% TLV Type: 0x%08x, Writer ID: %s(0x%02x), Writer Host ID: 0x%02x\n", r.Header.Type, hc.WriterName(r.Header.WriterID), r.Header.WriterID, r.Header.WriterHost)
		for i := 0; i+4 <= len(img); i += 4 {
			fmt.Fprintf(&b, "0x%08x ", binary.BigEndian.Uint32(img[i:]))
		}
		if rem := len(img) % 4; rem != 0 {
			var w [4]byte
			copy(w[:], img[len(img)-rem:])
			fmt.Fprintf(&b, "0x%08x ", binary.BigEndian.Uint32(w[:]))
		}
		b.WriteString("\n")
	}
	return b.Bytes(), nil
}

// BackupInfo is what a readable backup says about where it came from.
type BackupInfo struct {
	Lines []string // free-form "key: value" lines written as comments
}

// WriteBackup writes cxray's readable backup format:
//
//	CXRAY_NV_BACKUP 1
//	# comments: where it came from, and each parameter decoded
//	tlv 0x00000080 nv_global_pci_conf version=0 writer=ICMD_mlxconfig length=12
//	data 0x80000000 0x00080000 0x00000000
//
// The tlv and data lines are what restore writes; the comments say what the
// data means, for people reading or comparing backups.
func WriteBackup(tlvs []RawTLV, db *DB, hc *HeaderCodec, info BackupInfo) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s\n", BackupSignature, backupVersion)
	b.WriteString("# cxray NV configuration backup. 'cxray config restore FILE' writes it back;\n")
	b.WriteString("# the tlv and data lines are the configuration, '#' lines only explain it.\n")
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
// moved a block is caught.
func ParseBackup(text string, db *DB) ([]RawTLV, error) {
	if len(text) > MaxFileSize {
		return nil, &FileError{Msg: fmt.Sprintf("file of %d bytes; at most %d", len(text), MaxFileSize)}
	}
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
				return nil, &FileError{Line: line, Msg: fmt.Sprintf("not a cxray backup: the first line must be %q (or %s for mstflint's raw format)", BackupSignature+" "+backupVersion, RawFileSignature)}
			}
			if len(f) < 2 || f[1] != backupVersion {
				return nil, &FileError{Line: line, Msg: fmt.Sprintf("backup format version %q; this cxray reads version %s", strings.Join(f[1:], " "), backupVersion)}
			}
			sawSig = true
			continue
		}
		switch f[0] {
		case "tlv":
			if err := finish(); err != nil {
				return nil, err
			}
			if len(out) >= MaxFileTLVs {
				return nil, &FileError{Line: line, Msg: fmt.Sprintf("more than %d TLVs", MaxFileTLVs)}
			}
			if len(f) < 2 {
				return nil, &FileError{Line: line, Msg: "tlv needs a type dword: tlv 0x00000080 [name] [version=N] [writer=NAME]"}
			}
			t, err := strconv.ParseUint(f[1], 0, 32)
			if err != nil {
				return nil, &FileError{Line: line, Msg: fmt.Sprintf("%q is not a type dword (0x00000080)", f[1])}
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
						return nil, &FileError{Line: line, Msg: fmt.Sprintf("type 0x%08x is %s, but the line names %s; fix the type or the name", t, in.TLV.Name, kv)}
					}
					continue
				}
				switch k {
				case "version":
					n, err := strconv.ParseUint(v, 0, 4)
					if err != nil {
						return nil, &FileError{Line: line, Msg: fmt.Sprintf("version=%s: a version is 0..15", v)}
					}
					cur.Header.Version = int(n)
				case "writer":
					w, ok := parseWriter(v)
					if !ok {
						return nil, &FileError{Line: line, Msg: fmt.Sprintf("writer=%s: give a writer name (ICMD_mlxconfig) or number 0x0..0x1f", v)}
					}
					cur.Header.WriterID = w
				case "length":
					n, err := strconv.ParseUint(v, 0, 16)
					if err != nil || n > MaxData {
						return nil, &FileError{Line: line, Msg: fmt.Sprintf("length=%s: 0..%d bytes", v, MaxData)}
					}
					length = int(n)
				case "host":
					n, err := strconv.ParseUint(v, 0, 3)
					if err != nil {
						return nil, &FileError{Line: line, Msg: fmt.Sprintf("host=%s: 0..7", v)}
					}
					cur.Header.WriterHost = int(n)
				default:
					return nil, &FileError{Line: line, Msg: fmt.Sprintf("unknown key %q (version, writer, length, host)", k)}
				}
			}
		case "data":
			if cur == nil {
				return nil, &FileError{Line: line, Msg: "data before any tlv line"}
			}
			if cur.Data != nil {
				return nil, &FileError{Line: line, Msg: "a second data line for one TLV; put all dwords on one line"}
			}
			if (len(f)-1)*4 > MaxData {
				return nil, &FileError{Line: line, Msg: fmt.Sprintf("%d dwords; a TLV holds at most %d bytes", len(f)-1, MaxData)}
			}
			cur.Data = make([]byte, 0, 4*(len(f)-1))
			for _, t := range f[1:] {
				v, err := strconv.ParseUint(t, 0, 32)
				if err != nil {
					return nil, &FileError{Line: line, Msg: fmt.Sprintf("%q is not a 32-bit number", t)}
				}
				cur.Data = binary.BigEndian.AppendUint32(cur.Data, uint32(v))
			}
		default:
			return nil, &FileError{Line: line, Msg: fmt.Sprintf("unknown line %q (tlv, data, or # comments)", f[0])}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &FileError{Msg: err.Error()}
	}
	if !sawSig {
		return nil, &FileError{Msg: "empty file; a cxray backup starts with " + BackupSignature + " " + backupVersion}
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return out, nil
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

// Diff compares two TLV lists by type dword.
type Diff struct {
	OnlyA, OnlyB []RawTLV
	Changed      [][2]RawTLV
	Same         int
}

// Empty says the lists hold the same configuration.
func (d Diff) Empty() bool { return len(d.OnlyA) == 0 && len(d.OnlyB) == 0 && len(d.Changed) == 0 }

// Compare diffs two TLV lists, ordered by type.
func Compare(a, b []RawTLV) Diff {
	ma := map[uint32]RawTLV{}
	mb := map[uint32]RawTLV{}
	for _, r := range a {
		ma[r.Header.Type] = r
	}
	for _, r := range b {
		mb[r.Header.Type] = r
	}
	var types []uint32
	for t := range ma {
		types = append(types, t)
	}
	for t := range mb {
		if _, ok := ma[t]; !ok {
			types = append(types, t)
		}
	}
	sort.Slice(types, func(i, j int) bool { return types[i] < types[j] })
	var d Diff
	for _, t := range types {
		x, inA := ma[t]
		y, inB := mb[t]
		switch {
		case inA && !inB:
			d.OnlyA = append(d.OnlyA, x)
		case inB && !inA:
			d.OnlyB = append(d.OnlyB, y)
		case x.Equal(y):
			d.Same++
		default:
			d.Changed = append(d.Changed, [2]RawTLV{x, y})
		}
	}
	return d
}
