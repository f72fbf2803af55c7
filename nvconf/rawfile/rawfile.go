// Package rawfile reads and writes mstflint's raw TLV file (the format of
// mstconfig backup, set_raw and get_raw) and holds what every NV backup
// format shares: the TLV as a file holds it, the file errors, and the
// counted, checksummed end line that tells a whole file from a cut one.
// It knows no parameter database; nvconf's readable backup builds on it.
package rawfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/cxray/cxray/nvconf/tlv"
	"github.com/cxray/cxray/prm"
)

// TLV is one stored TLV: its header and data, as a backup holds it.
type TLV struct {
	Header tlv.Header
	// HeaderImage is the 12-byte header as the device or file gave it (nil
	// when built from fields); raw files reproduce it verbatim.
	HeaderImage []byte
	Data        []byte
}

// Equal says whether two TLVs hold the same configuration: type, version
// and data (the writer is who wrote it, not what it says).
func (r TLV) Equal(o TLV) bool {
	return r.Header.Type == o.Header.Type && r.Header.Version == o.Header.Version && bytes.Equal(r.Data, o.Data)
}

// Image is the header and data as one buffer (header from HeaderImage, or
// encoded through the MNVDA layout).
func (r TLV) Image(hc *tlv.HeaderCodec) ([]byte, error) {
	hdr := r.HeaderImage
	if len(hdr) != tlv.HeaderSize {
		buf := make([]byte, max(hc.Plan.Bytes, hc.HeaderOffset()+tlv.HeaderSize))
		h := r.Header
		h.Length = len(r.Data)
		if err := hc.EncodeHeader(buf, h); err != nil {
			return nil, err
		}
		// The file's checksum covers the writer host (Sum), so the image
		// must carry it too.
		if err := hc.PutWriterHost(buf, h.WriterHost); err != nil {
			return nil, err
		}
		hdr = buf[hc.HeaderOffset() : hc.HeaderOffset()+tlv.HeaderSize]
	}
	return append(append([]byte(nil), hdr...), r.Data...), nil
}

// The raw format (mstflint's raw TLV file, as mstconfig backup writes it).
const (
	// RawFileSignature starts mstflint's raw TLV files (mstconfig backup,
	// set_raw, get_raw).
	RawFileSignature = "MLNX_RAW_TLV_FILE"
	// rawMarker, a comment after a raw file's signature, says cxray wrote
	// it and that it ends with rawEnd: mstconfig skips '%' lines, so the
	// file stays mstconfig's format and is still self-checking.
	rawMarker = "% cxray raw TLV file: its last line is '% end tlvs=N sha256=...'; without it the file was cut short"
	rawEnd    = "% end"
)

// Limits on files read.
const (
	MaxFileSize = 4 << 20
	MaxFileTLVs = 4096
	maxRawBytes = tlv.HeaderSize + tlv.MaxData // one NVDA image
)

// FileError reports a malformed backup or raw file with the line. Kind
// says why a whole file is refused (truncated, corrupt, foreign); Fix says
// what to do.
type FileError struct {
	Line int
	Msg  string
	Kind string
	Fix  string
}

// Kinds of refused files.
const (
	FileTruncated = "truncated" // cut short: an interrupted write or copy
	FileCorrupt   = "corrupt"   // changed after it was written, or two joined
	FileForeign   = "foreign"   // not an NV backup at all
)

func (e *FileError) Error() string {
	s := e.Msg
	if e.Line > 0 {
		s = fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

// Is makes a damaged or foreign file an input error (prm.ErrInput).
func (e *FileError) Is(target error) bool { return target == prm.ErrInput }

// FixBackup is what to do about a refused backup.
const FixBackup = "nothing was written: use a complete backup (cxray writes one before every change; 'cxray config backup FILE -d DEV' makes a new one)"

// IsRaw says whether text is in mstflint's raw TLV format.
func IsRaw(text string) bool {
	first, _, _ := strings.Cut(strings.TrimLeft(text, " \t\r\n"), "\n")
	return strings.TrimSpace(first) == RawFileSignature
}

// Parse reads mstflint's raw TLV format: the signature line, '%'
// comment lines, and one line per TLV of dwords (header then data). As
// mstconfig checks, the data must be exactly the header's length.
//
// The format has no count or checksum, so Parse is as strict as the
// format allows, to tell a file cut short or damaged from a smaller backup:
// every line ends with its newline (a last line without one was cut); every
// dword is written as mstconfig and cxray write it, 0x and 8 hex digits (a
// shorter word is a cut or a damaged one, which would otherwise read as a
// smaller number); a "% TLV Type: 0x..." comment is followed by the data
// line of that type (a comment last in the file means its data line was
// lost). What remains undetectable is a cut exactly after a TLV's line:
// that reads as the complete backup of fewer TLVs (BackupFile.Unchecked).
//
// A file cxray wrote (rawMarker) ends with a count and checksum, as its
// own backups do, so that cut too is refused.
func Parse(text string, hc *tlv.HeaderCodec) ([]TLV, error) {
	tlvs, _, err := ParseChecked(text, hc)
	return tlvs, err
}

// ParseChecked reads a raw file; checked says it carried cxray's end line and
// matched it.
func ParseChecked(text string, hc *tlv.HeaderCodec) ([]TLV, bool, error) {
	if len(text) > MaxFileSize {
		return nil, false, &FileError{Msg: fmt.Sprintf("file of %d bytes; at most %d", len(text), MaxFileSize)}
	}
	lines := strings.Split(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		return nil, false, &FileError{Line: len(lines), Kind: FileTruncated,
			Msg: "the last line has no newline: the file was cut short inside it (an interrupted write or copy; a file made by hand must end its last line with a newline)", Fix: FixBackup}
	}
	lines = lines[:len(lines)-1] // after the final newline
	var out []TLV
	sawSig := false
	// announced is the type the last "% TLV Type:" comment named, and its
	// line, until its data line comes.
	announced, announcedLine := uint32(0), 0
	marked := false
	var end *End
	for i, raw := range lines {
		line := i + 1
		l := strings.TrimSpace(raw)
		if !sawSig {
			if l == "" {
				continue
			}
			if l != RawFileSignature {
				return nil, false, &FileError{Line: line, Kind: FileForeign, Msg: fmt.Sprintf("not a raw TLV file: the first line must be %s", RawFileSignature)}
			}
			sawSig = true
			continue
		}
		if l == "" {
			continue
		}
		if end != nil {
			return nil, false, &FileError{Line: line, Kind: FileCorrupt, Msg: "lines after the end line (two files joined, or an edit)", Fix: FixBackup}
		}
		if l == rawMarker {
			marked = true
			continue
		}
		if f := strings.Fields(l); len(f) >= 2 && f[0]+" "+f[1] == rawEnd {
			if announcedLine > 0 {
				return nil, false, &FileError{Line: line, Kind: FileCorrupt, Msg: fmt.Sprintf("the TLV 0x%08x announced on line %d has no data line", announced, announcedLine), Fix: "a line was lost or the file edited; " + FixBackup}
			}
			e, err := ParseEnd(f[2:])
			if err != nil {
				return nil, false, &FileError{Line: line, Kind: FileCorrupt, Msg: err.Error(), Fix: FixBackup}
			}
			e.Line = line
			end = e
			continue
		}
		if l[0] == '%' {
			if t, ok := commentType(l); ok {
				if announcedLine > 0 {
					return nil, false, &FileError{Line: line, Kind: FileCorrupt, Msg: fmt.Sprintf("the TLV 0x%08x announced on line %d has no data line", announced, announcedLine), Fix: "a line was lost or the file edited; " + FixBackup}
				}
				announced, announcedLine = t, line
			}
			continue
		}
		toks := strings.Fields(l)
		if len(toks)*4 > maxRawBytes {
			return nil, false, &FileError{Line: line, Kind: FileCorrupt, Msg: fmt.Sprintf("%d dwords; a TLV is at most %d bytes with its header", len(toks), maxRawBytes), Fix: FixBackup}
		}
		if len(toks) < tlv.HeaderSize/4 {
			return nil, false, &FileError{Line: line, Kind: FileCorrupt, Msg: "a TLV line needs at least the 3 header dwords", Fix: "the line was cut short or edited; " + FixBackup}
		}
		img := make([]byte, 0, 4*len(toks))
		for _, t := range toks {
			v, ok := rawWord(t)
			if !ok {
				return nil, false, &FileError{Line: line, Kind: FileCorrupt,
					Msg: fmt.Sprintf("%q is not a dword as raw TLV files write it (0x and 8 hex digits, like 0x0009000c): the word was cut or damaged", t), Fix: FixBackup}
			}
			img = binary.BigEndian.AppendUint32(img, v)
		}
		r, err := fromImage(img, hc)
		if err != nil {
			return nil, false, &FileError{Line: line, Kind: FileCorrupt, Msg: err.Error(), Fix: "the line was cut short or edited; " + FixBackup}
		}
		if announcedLine > 0 && announced != r.Header.Type {
			return nil, false, &FileError{Line: line, Kind: FileCorrupt, Msg: fmt.Sprintf("the data line holds TLV 0x%08x, but line %d announces 0x%08x", r.Header.Type, announcedLine, announced), Fix: "the file was damaged or edited; " + FixBackup}
		}
		announcedLine = 0
		if len(out) >= MaxFileTLVs {
			return nil, false, &FileError{Line: line, Msg: fmt.Sprintf("more than %d TLVs", MaxFileTLVs)}
		}
		out = append(out, r)
	}
	if !sawSig {
		return nil, false, &FileError{Kind: FileForeign, Msg: "empty file; a raw TLV file starts with " + RawFileSignature}
	}
	if announcedLine > 0 {
		return nil, false, &FileError{Line: announcedLine, Kind: FileTruncated, Msg: fmt.Sprintf("the file ends after the comment announcing TLV 0x%08x, without its data line: it was cut short", announced), Fix: FixBackup}
	}
	if end == nil {
		if marked {
			return nil, false, &FileError{Kind: FileTruncated, Msg: "cxray wrote this raw file, and it has no end line: it was cut short (an interrupted write, a full disk, a partial copy)", Fix: FixBackup}
		}
		if len(out) == 0 {
			return nil, false, &FileError{Kind: FileTruncated, Msg: "the raw file holds no TLV: it was cut short after its first line, or is the backup of an empty NV area (then there is nothing to restore: 'cxray config reset --all' returns everything to its default)", Fix: FixBackup}
		}
		return out, false, nil
	}
	if err := end.Verify(out, "the TLVs do not match the file's checksum: it was changed or damaged after cxray wrote it"); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// rawWord reads one dword of a raw file: "0x" and exactly 8 hex digits,
// as mstconfig backup and Write write every word.
func rawWord(t string) (uint32, bool) {
	if len(t) != 10 || t[0] != '0' || (t[1] != 'x' && t[1] != 'X') {
		return 0, false
	}
	b, err := hex.DecodeString(t[2:])
	if err != nil {
		return 0, false
	}
	return binary.BigEndian.Uint32(b), true
}

// commentType reads the type of a "% TLV Type: 0x00000080, ..." comment,
// the line mstconfig backup (and Write) writes before each TLV.
func commentType(l string) (uint32, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(strings.TrimPrefix(l, "%")), "TLV Type:")
	if !ok {
		return 0, false
	}
	f := strings.FieldsFunc(rest, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	if len(f) == 0 {
		return 0, false
	}
	v, ok := rawWord(f[0])
	return v, ok
}

// fromImage splits header+data and checks the length.
func fromImage(img []byte, hc *tlv.HeaderCodec) (TLV, error) {
	buf := make([]byte, max(hc.Plan.Bytes, hc.HeaderOffset()+tlv.HeaderSize))
	copy(buf[hc.HeaderOffset():], img[:tlv.HeaderSize])
	h := hc.DecodeHeader(buf)
	if n := len(img) - tlv.HeaderSize; n != h.Length {
		return TLV{}, fmt.Errorf("TLV size mismatch: the header says %d data bytes, the line carries %d", h.Length, n)
	}
	return TLV{Header: h, HeaderImage: append([]byte(nil), img[:tlv.HeaderSize]...), Data: append([]byte(nil), img[tlv.HeaderSize:]...)}, nil
}

// Write writes TLVs in mstflint's raw format, as mstconfig backup
// does: a comment line per TLV naming type and writer, then its dwords.
func Write(tlvs []TLV, hc *tlv.HeaderCodec) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(RawFileSignature + "\n")
	b.WriteString(rawMarker + "\n")
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
	fmt.Fprintf(&b, "%s tlvs=%d sha256=%x\n", rawEnd, len(tlvs), Sum(tlvs))
	return b.Bytes(), nil
}

// Sum is the checksum of a backup's TLVs: type, version, writer,
// writer host, the data length and the data, in file order.
func Sum(tlvs []TLV) [sha256.Size]byte {
	h := sha256.New()
	for _, r := range tlvs {
		var hdr [11]byte
		binary.BigEndian.PutUint32(hdr[0:], r.Header.Type)
		hdr[4], hdr[5], hdr[6] = byte(r.Header.Version), r.Header.WriterID, byte(r.Header.WriterHost)
		binary.BigEndian.PutUint32(hdr[7:], uint32(len(r.Data)))
		h.Write(hdr[:])
		h.Write(r.Data)
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// End is a file's end line: the TLV count and their checksum (Sum).
type End struct {
	count int
	sum   []byte
	// Line is the end line's number in its file, for errors.
	Line int
}

// verify checks the TLVs read against the end line cxray wrote last: their
// count (fewer is a cut, more a damage), then their checksum (badSum says
// which file's).
func (e *End) Verify(out []TLV, badSum string) error {
	if e.count != len(out) {
		kind := FileCorrupt
		if len(out) < e.count {
			kind = FileTruncated
		}
		return &FileError{Line: e.Line, Kind: kind, Msg: fmt.Sprintf("the end line counts %d TLVs; the file holds %d", e.count, len(out)), Fix: FixBackup}
	}
	if sum := Sum(out); !bytes.Equal(sum[:], e.sum) {
		return &FileError{Line: e.Line, Kind: FileCorrupt, Msg: badSum, Fix: FixBackup}
	}
	return nil
}

// ParseEnd reads "tlvs=N sha256=HEX".
func ParseEnd(kv []string) (*End, error) {
	e := &End{count: -1}
	for _, x := range kv {
		k, v, _ := strings.Cut(x, "=")
		switch k {
		case "tlvs":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > MaxFileTLVs {
				return nil, fmt.Errorf("end line: tlvs=%s is not a count", v)
			}
			e.count = n
		case "sha256":
			b, err := hex.DecodeString(v)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("end line: sha256=%s is not a checksum", v)
			}
			e.sum = b
		default:
			return nil, fmt.Errorf("end line: unknown key %q", k)
		}
	}
	if e.count < 0 || e.sum == nil {
		return nil, fmt.Errorf("the end line needs tlvs=N and sha256=...")
	}
	return e, nil
}

// Diff compares two TLV lists by type dword.
type Diff struct {
	OnlyA, OnlyB []TLV
	Changed      [][2]TLV
	Same         int
}

// Empty says the lists hold the same configuration.
func (d Diff) Empty() bool { return len(d.OnlyA) == 0 && len(d.OnlyB) == 0 && len(d.Changed) == 0 }

// Compare diffs two TLV lists, ordered by type.
func Compare(a, b []TLV) Diff {
	ma := map[uint32]TLV{}
	mb := map[uint32]TLV{}
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
			d.Changed = append(d.Changed, [2]TLV{x, y})
		}
	}
	return d
}
