package nvconf

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The facts format is the built-in parameter set: what the database says
// about each TLV and parameter, without description text. Line based and
// tab separated so a regenerated file diffs well:
//
//	tlv	NAME	ID	CLASS	SIZE_BYTES	TARGET	CAP	VERSION	TITLE
//	p	NAME	OFFSET	SIZE	TYPE	[key=value]...
//
// Parameter lines follow their TLV in database order. Keys: mlx (the
// user-visible name), enum (NAME:VALUE,...), valid (valid bit), dep, tmp,
// min, max, rule, regex (expressions, verbatim), from (supported from TLV
// version), arr (array length). A value holding a tab, a newline or a
// leading quote is written Go-quoted.

// WriteFacts writes db in the facts format, header lines first as comments.
func WriteFacts(w io.Writer, db *DB, header []string) error {
	bw := bufio.NewWriter(w)
	for _, h := range header {
		fmt.Fprintf(bw, "# %s\n", h)
	}
	for _, t := range db.TLVs {
		fmt.Fprintf(bw, "tlv\t%s\t%d\t%d\t%d\t%s\t%d\t%d\t%s\n", t.Name, t.ID, t.Class, t.Size, factText(t.Target), b2i(t.Cap), t.Version, factText(t.Title))
		for _, p := range t.Params {
			fmt.Fprintf(bw, "p\t%s\t%s\t%s\t%s", p.Name, p.OffsetText, p.SizeText, p.Type)
			kv := func(k, v string) {
				if v != "" {
					fmt.Fprintf(bw, "\t%s=%s", k, factText(v))
				}
			}
			kv("mlx", p.MlxName)
			if len(p.Enum) > 0 {
				parts := make([]string, len(p.Enum))
				for i, e := range p.Enum {
					parts[i] = e.Name + ":" + strconv.FormatUint(e.Value, 10)
				}
				kv("enum", strings.Join(parts, ","))
			}
			kv("valid", p.ValidBit)
			kv("dep", p.Dependency)
			kv("tmp", p.TempVars)
			kv("min", p.MinVal)
			kv("max", p.MaxVal)
			kv("rule", p.Rule)
			kv("regex", p.Regex)
			if p.FromVersion != 0 {
				kv("from", strconv.Itoa(p.FromVersion))
			}
			if p.ArrayLen != 0 {
				kv("arr", strconv.Itoa(p.ArrayLen))
			}
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func factText(s string) string {
	if strings.ContainsAny(s, "\t\n\r") || strings.HasPrefix(s, `"`) {
		return strconv.Quote(s)
	}
	return s
}

func unfactText(s string) (string, error) {
	if strings.HasPrefix(s, `"`) {
		return strconv.Unquote(s)
	}
	return s, nil
}

// ReadFacts parses the facts format.
func ReadFacts(source, text string) (*DB, error) {
	var tlvs []*TLV
	var cur *TLV
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Split(l, "\t")
		bad := func(msg string) error { return fmt.Errorf("%s line %d: %s", source, line, msg) }
		switch f[0] {
		case "tlv":
			if len(f) != 9 {
				return nil, bad("a tlv line has 9 fields")
			}
			id, e1 := strconv.ParseUint(f[2], 10, 32)
			cl, e2 := strconv.ParseUint(f[3], 10, 8)
			sz, e3 := strconv.Atoi(f[4])
			cp, e4 := strconv.Atoi(f[6])
			ver, e5 := strconv.Atoi(f[7])
			target, e6 := unfactText(f[5])
			title, e7 := unfactText(f[8])
			for _, e := range []error{e1, e2, e3, e4, e5, e6, e7} {
				if e != nil {
					return nil, bad(e.Error())
				}
			}
			cur = &TLV{Name: f[1], ID: uint32(id), Class: Class(cl), Size: sz, Target: target, Cap: cp != 0, Version: ver, Title: title}
			tlvs = append(tlvs, cur)
		case "p":
			if cur == nil {
				return nil, bad("a parameter before any tlv line")
			}
			if len(f) < 5 {
				return nil, bad("a p line has at least 5 fields")
			}
			p := &Param{Name: f[1], OffsetText: f[2], SizeText: f[3]}
			var err error
			if p.Type, err = ParseType(f[4]); err != nil {
				return nil, bad(err.Error())
			}
			if p.Offset, err = ParseByteBit(p.OffsetText); err != nil {
				return nil, bad(err.Error())
			}
			if p.Size, err = ParseByteBit(p.SizeText); err != nil {
				return nil, bad(err.Error())
			}
			for _, kv := range f[5:] {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return nil, bad(fmt.Sprintf("%q is not key=value", kv))
				}
				if v, err = unfactText(v); err != nil {
					return nil, bad(err.Error())
				}
				switch k {
				case "mlx":
					p.MlxName = v
				case "enum":
					for _, part := range strings.Split(v, ",") {
						n, num, ok := strings.Cut(part, ":")
						u, err := strconv.ParseUint(num, 10, 64)
						if !ok || err != nil {
							return nil, bad(fmt.Sprintf("enum value %q is not NAME:NUMBER", part))
						}
						p.Enum = append(p.Enum, EnumValue{Name: n, Value: u})
					}
				case "valid":
					p.ValidBit = v
				case "dep":
					p.Dependency = v
				case "tmp":
					p.TempVars = v
				case "min":
					p.MinVal = v
				case "max":
					p.MaxVal = v
				case "rule":
					p.Rule = v
				case "regex":
					p.Regex = v
				case "from":
					if p.FromVersion, err = strconv.Atoi(v); err != nil {
						return nil, bad(err.Error())
					}
				case "arr":
					if p.ArrayLen, err = strconv.Atoi(v); err != nil {
						return nil, bad(err.Error())
					}
				default:
					return nil, bad(fmt.Sprintf("unknown key %q", k))
				}
			}
			cur.Params = append(cur.Params, p)
		default:
			return nil, bad(fmt.Sprintf("unknown line kind %q", f[0]))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return NewDB(source, tlvs, false)
}

// GenerateFacts reads an SQLite NV database and returns its facts file. The
// output depends only on the input bytes, so regenerating is reproducible.
func GenerateFacts(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	db, err := LoadSQLite(path)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	header := []string{
		fmt.Sprintf("Code generated by cxray nvgen from %s (%d TLVs, %d parameters, sha256 %x); DO NOT EDIT.", filepath.Base(path), len(db.TLVs), db.ParamCount(), sha256.Sum256(data)),
		"Facts only: names, TLV types, classes, offsets, sizes, types, enum values, valid bits, limits. Regenerate with: go generate ./nvconf/builtin",
	}
	if err := WriteFacts(&buf, db, header); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
