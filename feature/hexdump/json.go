package hexdump

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// readJSON reads the JSON documents that carry register bytes: cxray's
// own (`reg get --id -o json` "dwords", `prm encode -o json` "hex", `reg
// get -o json` and `prm decode -o json` "fields") and rdma's `-j resource
// show ... -r` ("data": a list of byte values).
func readJSON(t string) (*Dump, error) {
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, &Error{Msg: "the dump starts like JSON but is not valid JSON: " + err.Error()}
	}
	if dec.More() {
		return nil, &Error{Msg: "more than one JSON document; paste one"}
	}
	objs := []map[string]any{}
	switch v := doc.(type) {
	case map[string]any:
		objs = append(objs, v)
	case []any:
		for _, e := range v {
			if m, ok := e.(map[string]any); ok {
				objs = append(objs, m)
			}
		}
	}
	var found []*Dump
	for _, o := range objs {
		d, err := jsonObject(o)
		if err != nil {
			return nil, err
		}
		if d != nil {
			found = append(found, d)
		}
	}
	switch len(found) {
	case 0:
		return nil, &Error{Msg: `no register bytes in this JSON: expected "dwords", "hex", "data" (rdma -j ... -r) or "fields"`}
	case 1:
		return found[0], nil
	}
	return nil, &Error{Msg: fmt.Sprintf("the JSON holds %d dumps (several resources?); narrow the command to one (e.g. rdma ... lqpn N) and paste that", len(found))}
}

func jsonObject(o map[string]any) (*Dump, error) {
	d := &Dump{}
	for _, k := range []string{"register", "name"} {
		if s, ok := o[k].(string); ok && isFieldName(s) {
			d.Register = s
			break
		}
	}
	switch {
	case o["dwords"] != nil:
		list, ok := o["dwords"].([]any)
		if !ok {
			return nil, &Error{Msg: `"dwords" is not a list`}
		}
		for i, e := range list {
			s, ok := e.(string)
			if !ok {
				if n, isNum := e.(json.Number); isNum {
					s = "0x" + strings.TrimPrefix(fmt.Sprintf("%08x", mustUint(n)), "0x")
				} else {
					return nil, &Error{Msg: fmt.Sprintf(`"dwords"[%d] is not a string`, i)}
				}
			}
			b, err := token(s, true)
			if err != nil {
				return nil, &Error{Msg: fmt.Sprintf(`"dwords"[%d] %q: %v`, i, s, err)}
			}
			d.Bytes = append(d.Bytes, b...)
		}
		d.Format = "cxray JSON (dwords)"
	case o["hex"] != nil:
		s, ok := o["hex"].(string)
		if !ok {
			return nil, &Error{Msg: `"hex" is not a string`}
		}
		b, err := token(s, false)
		if err != nil {
			return nil, &Error{Msg: fmt.Sprintf(`"hex": %v`, err)}
		}
		d.Bytes, d.Format = b, "cxray JSON (hex)"
	case o["data"] != nil:
		list, ok := o["data"].([]any)
		if !ok {
			return nil, &Error{Msg: `"data" is not a list of byte values`}
		}
		for i, e := range list {
			n, ok := e.(json.Number)
			v, err := strconv.ParseUint(string(n), 10, 8)
			if !ok || err != nil {
				return nil, &Error{Msg: fmt.Sprintf(`"data"[%d] is not a byte value (0..255)`, i)}
			}
			d.Bytes = append(d.Bytes, byte(v))
		}
		d.Format = "rdma -j ... -r (data)"
	case o["fields"] != nil:
		fields, ok := o["fields"].(map[string]any)
		if !ok {
			return nil, &Error{Msg: `"fields" is not an object`}
		}
		d.Format = "cxray JSON (fields)"
		if err := flattenJSON(d, "", fields); err != nil {
			return nil, err
		}
		if d.Fields == nil {
			d.Fields = []Field{}
		}
	default:
		return nil, nil
	}
	if len(d.Bytes) > MaxBytes {
		return nil, &Error{Msg: fmt.Sprintf("%d bytes is more than any dump (%d)", len(d.Bytes), MaxBytes)}
	}
	return d, nil
}

func mustUint(n json.Number) uint64 {
	v, _ := strconv.ParseUint(string(n), 10, 32)
	return v
}

// flattenJSON turns cxray's nested "fields" object into path=value rows.
// Arrays are numbered from 0, as cxray prints them in JSON.
func flattenJSON(d *Dump, path string, v any) error {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		// Map order is random; fields are placed by path, so order does
		// not matter, but keep the output stable.
		slices.Sort(keys)
		for _, k := range keys {
			if err := flattenJSON(d, joinPath(path, k), x[k]); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := flattenJSON(d, fmt.Sprintf("%s[%d]", path, i), e); err != nil {
				return err
			}
		}
	case json.Number:
		d.Fields = append(d.Fields, Field{Name: path, Value: string(x), JSON: true})
	case string:
		d.Fields = append(d.Fields, Field{Name: path, Value: x, JSON: true, str: true})
	case bool:
		b := "0"
		if x {
			b = "1"
		}
		d.Fields = append(d.Fields, Field{Name: path, Value: b, JSON: true})
	case nil:
		// A value cxray could not read (null): leave the bits zero.
	default:
		return &Error{Msg: fmt.Sprintf("%s: unexpected JSON value", path)}
	}
	return nil
}
