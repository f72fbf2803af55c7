package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// ReadError is a snapshot file refused whole: cut short, another tool's
// JSON, a newer format. Nothing of it is used.
type ReadError struct {
	Path string
	Kind string // "truncated", "foreign", "invalid"
	Msg  string
}

func (e *ReadError) Error() string { return e.Path + ": " + e.Msg }

// Kinds of refused snapshot files.
const (
	ReadTruncated = "truncated"
	ReadForeign   = "foreign"
	ReadInvalid   = "invalid"
)

// Parse reads a snapshot file's bytes (path names it in messages). A file
// cut short, another tool's JSON, trailing data (two files joined) and a
// document without devices are refused with the reason.
func Parse(b []byte, path string) (*File, error) {
	bad := func(kind, format string, args ...any) error {
		return &ReadError{Path: path, Kind: kind, Msg: fmt.Sprintf(format, args...)}
	}
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return nil, bad(ReadTruncated, "the file is empty (an interrupted write?); take the snapshot again")
	}
	if t[0] != '{' {
		what := "it is not JSON"
		if t[0] == '[' {
			what = "it is a JSON list"
		}
		return nil, bad(ReadForeign, "not a cxray snapshot: %s; a snapshot is the JSON object 'cxray snapshot --out FILE' writes", what)
	}
	// First the shape, so another tool's JSON is named as such.
	var top map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(t))
	if err := dec.Decode(&top); err != nil {
		var se *json.SyntaxError
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &se) && se.Offset >= int64(len(t)) {
			return nil, bad(ReadTruncated, "the JSON ends before it is complete (after %d bytes): the file was cut short (an interrupted write, a full disk, a partial copy); take the snapshot again or use a complete copy", len(t))
		}
		if errors.As(err, &se) {
			return nil, bad(ReadInvalid, "not valid JSON at byte %d: %v", se.Offset, err)
		}
		return nil, bad(ReadInvalid, "not valid JSON: %v", err)
	}
	if dec.More() || dec.InputOffset() < int64(len(t)) {
		return nil, bad(ReadInvalid, "more data after the snapshot's JSON (two files joined?); one snapshot per file")
	}
	var format string
	if raw, ok := top["format"]; ok {
		_ = json.Unmarshal(raw, &format)
	}
	if format != Format {
		keys := make([]string, 0, len(top))
		for k := range top {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) > 6 {
			keys = append(keys[:6], "...")
		}
		why := fmt.Sprintf("its format is %q", format)
		if _, ok := top["format"]; !ok {
			why = "it has no \"format\" field (its keys: " + strings.Join(keys, ", ") + ")"
		}
		hint := ""
		switch {
		case top["fields"] != nil && top["register"] != nil:
			hint = "; it looks like 'cxray reg get -o json' output"
		case top["static_changes"] != nil:
			hint = "; it looks like 'cxray diff -o json' output"
		}
		return nil, bad(ReadForeign, "not a cxray snapshot: %s%s; compare snapshots written by 'cxray snapshot --out FILE'", why, hint)
	}
	var f File
	if err := json.Unmarshal(t, &f); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, bad(ReadInvalid, "the snapshot's %s has the wrong type (%s where %s belongs); was it edited by hand?", te.Field, te.Value, te.Type)
		}
		return nil, bad(ReadInvalid, "not a readable cxray snapshot: %v", err)
	}
	if f.Version > Version {
		return nil, bad(ReadInvalid, "snapshot version %d is newer than this cxray reads (%d); update cxray", f.Version, Version)
	}
	if len(f.Devices) == 0 {
		return nil, bad(ReadInvalid, "the snapshot has no devices")
	}
	return &f, nil
}
