package adb

import (
	"bytes"
	"encoding/xml"
	"os"
	"strings"
	"sync"
)

// Descriptions serves description text from an ADB file without loading all
// of it: the built-in database has no text, and parsing the whole 650 KB ADB
// would triple the start-up time of `cxray prm show`. It indexes where each
// <node> element starts and parses only the nodes asked for.
type Descriptions struct {
	Path     string
	Revision string

	mu    sync.Mutex
	data  []byte
	spans map[string][2]int
	cache map[string]map[string]string
}

// OpenDescriptions prepares descriptions from an ADB. The file is read and
// indexed on the first Node call: most commands never show a description,
// and reading 650 KB on every start would cost them for nothing.
func OpenDescriptions(path string) (*Descriptions, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	head := make([]byte, 64<<10)
	n, _ := f.Read(head)
	f.Close()
	return &Descriptions{Path: path, Revision: PeekRevision(head[:n]), cache: map[string]map[string]string{}}, nil
}

// load reads and indexes the file (under d.mu).
func (d *Descriptions) load() {
	if d.spans != nil {
		return
	}
	d.spans = map[string][2]int{}
	data, err := os.ReadFile(d.Path)
	if err != nil {
		return // descriptions are a nicety: none, rather than an error
	}
	d.data = data
	open := []byte("<node ")
	for off := 0; ; {
		i := bytes.Index(data[off:], open)
		if i < 0 {
			break
		}
		start := off + i
		end := bytes.Index(data[start:], []byte("</node>"))
		if end < 0 {
			break
		}
		end += start + len("</node>")
		if name := attr(data[start:min(end, start+512)], "name"); name != "" {
			d.spans[name] = [2]int{start, end}
		}
		off = end
	}
}

// PeekRevision reads source_doc_version from the top of an ADB.
func PeekRevision(data []byte) string {
	head := data[:min(len(data), 64<<10)]
	i := bytes.Index(head, []byte("<info "))
	if i < 0 {
		return ""
	}
	j := bytes.IndexByte(head[i:], '>')
	if j < 0 {
		return ""
	}
	return strings.TrimSpace(attr(head[i:i+j], "source_doc_version"))
}

// attr pulls attribute name="..." out of the start of an element.
func attr(b []byte, name string) string {
	key := []byte(" " + name + `="`)
	i := bytes.Index(b, key)
	if i < 0 {
		return ""
	}
	rest := b[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// Node returns the description of a node ("" key) and of each of its fields.
func (d *Descriptions) Node(name string) map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if m, ok := d.cache[name]; ok {
		return m
	}
	d.load()
	m := map[string]string{}
	if sp, ok := d.spans[name]; ok {
		dec := xml.NewDecoder(bytes.NewReader(d.data[sp[0]:sp[1]]))
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			if se, ok := tok.(xml.StartElement); ok {
				a := attrMap(se.Attr)
				switch se.Name.Local {
				case "node":
					m[""] = Descr(a["descr"])
				case "field":
					m[a["name"]] = Descr(a["descr"])
				}
			}
		}
	}
	d.cache[name] = m
	return m
}
