package monitor

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// LogFile appends whole lines to a file that is rotated by size. Each line
// goes out in one write(2) call, so a killed monitor leaves whole lines; a
// torn last line (power loss) is cut off when the file is opened again.
type LogFile struct {
	path    string
	f       *os.File
	size    int64
	maxSize int64
	keep    int
}

// OpenLog opens path for appending, repairing a torn last line. Files past
// maxSize (0: no limit) are rotated to path.1 ... path.keep.
func OpenLog(path string, maxSize int64, keep int) (*LogFile, error) {
	if err := Repair(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("monitor file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if keep <= 0 {
		keep = 3
	}
	return &LogFile{path: path, f: f, size: st.Size(), maxSize: maxSize, keep: keep}, nil
}

// Repair cuts a file back to its last complete line.
func Repair(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("monitor file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	// Look back for the last newline, a chunk at a time.
	end := st.Size()
	buf := make([]byte, 64<<10)
	for pos := end; pos > 0; {
		n := int64(len(buf))
		if n > pos {
			n = pos
		}
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil && err != io.EOF {
			return err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			if cut := pos + int64(i) + 1; cut != end {
				return f.Truncate(cut)
			}
			return nil
		}
	}
	return f.Truncate(0)
}

// WriteLine appends line and a newline.
func (l *LogFile) WriteLine(line []byte) error {
	if l.maxSize > 0 && l.size > 0 && l.size+int64(len(line))+1 > l.maxSize {
		if err := l.rotate(); err != nil {
			return err
		}
	}
	b := make([]byte, 0, len(line)+1)
	b = append(append(b, line...), '\n')
	n, err := l.f.Write(b)
	l.size += int64(n)
	return err
}

// rotate shifts the path.N names itself: lumberjack, the usual library,
// counts the limit in whole megabytes (--max-size is in bytes) and names
// its backups by timestamp.
func (l *LogFile) rotate() error {
	if err := l.f.Close(); err != nil {
		return err
	}
	for i := l.keep - 1; i >= 1; i-- {
		os.Rename(fmt.Sprintf("%s.%d", l.path, i), fmt.Sprintf("%s.%d", l.path, i+1))
	}
	if err := os.Rename(l.path, l.path+".1"); err != nil {
		return fmt.Errorf("monitor file: rotate: %w", err)
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("monitor file: %w", err)
	}
	l.f, l.size = f, 0
	return nil
}

// Sync flushes the file to disk.
func (l *LogFile) Sync() error { return l.f.Sync() }

// Close syncs and closes.
func (l *LogFile) Close() error {
	l.f.Sync()
	return l.f.Close()
}

// Recording is a monitor file as read back (by plot).
type Recording struct {
	// Format is "jsonl" or "csv".
	Format  string
	Samples []Sample
	// TornLine is set when the last line was cut (a crash while writing
	// it): it is left out.
	TornLine bool
}

// RecordingError is a monitor file refused with the reason.
type RecordingError struct {
	Line int
	Msg  string
}

func (e *RecordingError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// maxRecordingLine bounds one line of a monitor file.
const maxRecordingLine = 16 << 20

// ReadRecording reads a monitor file written with --format jsonl or csv.
// A torn last line (the file was cut while a line was being written) is
// left out and reported; anything else that is not a sample is refused
// with the line and the reason: a table written by mistake (--format
// table), another kind of file, a damaged line in the middle.
func ReadRecording(r io.Reader) (*Recording, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var lines []string
	torn, cut := false, false
	for {
		l, err := br.ReadString('\n')
		if len(l) > maxRecordingLine {
			return nil, &RecordingError{Line: len(lines) + 1, Msg: fmt.Sprintf("a line of more than %d bytes; not a monitor file", maxRecordingLine)}
		}
		if err == io.EOF {
			if l != "" {
				lines = append(lines, l)
				torn = true // no newline: the write of this line was cut
			}
			break
		}
		if err != nil {
			return nil, err
		}
		lines = append(lines, strings.TrimRight(l, "\r\n"))
	}
	for i, l := range lines {
		// cxray writes only UTF-8; a line that is not (a torn last line
		// may end inside a character) is damage or another tool's file,
		// and reading it would change its names (JSON turns invalid
		// bytes into U+FFFD).
		if utf8.ValidString(l) {
			continue
		}
		if torn && i == len(lines)-1 {
			lines, cut, torn = lines[:i], true, false
			break
		}
		return nil, &RecordingError{Line: i + 1, Msg: "not UTF-8 text; the file is damaged or is not what cxray monitor writes"}
	}
	first := ""
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			first = strings.TrimSpace(l)
			break
		}
	}
	rec := &Recording{}
	var err error
	switch {
	case first == "":
		return nil, &RecordingError{Msg: "the file is empty; record samples with cxray monitor --format jsonl --out FILE"}
	case strings.HasPrefix(first, "{"):
		rec.Format = "jsonl"
		err = rec.readJSONL(lines, torn)
	case strings.HasPrefix(first, "time,device,"):
		rec.Format = "csv"
		err = rec.readCSV(lines, torn)
	case looksLikeTable(first):
		return nil, &RecordingError{Line: 1, Msg: "this is monitor's table output (--format table), which is for people and cannot be read back; record with cxray monitor --format jsonl (or csv) --out FILE"}
	default:
		return nil, &RecordingError{Line: 1, Msg: fmt.Sprintf("not a monitor file (%q); plot reads what cxray monitor --format jsonl or --format csv writes", clip(first))}
	}
	if err != nil {
		return nil, err
	}
	rec.TornLine = rec.TornLine || cut
	if len(rec.Samples) == 0 {
		return nil, &RecordingError{Msg: "the file holds no complete sample"}
	}
	return rec, nil
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// looksLikeTable: "2024-05-01T08:00:00Z  0000:03:00.0", a table's heading.
func looksLikeTable(l string) bool {
	f := strings.Fields(l)
	if len(f) != 2 {
		return false
	}
	_, err := time.Parse(time.RFC3339, f[0])
	return err == nil
}

func (rec *Recording) readJSONL(lines []string, torn bool) error {
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var s Sample
		err := json.Unmarshal([]byte(l), &s)
		if err == nil && s.Time.IsZero() {
			err = fmt.Errorf("it has no time")
		}
		if err != nil {
			if i == len(lines)-1 && torn {
				rec.TornLine = true // cut while being written
				return nil
			}
			if looksLikeTable(strings.TrimSpace(l)) || strings.HasPrefix(l, "  ") {
				return &RecordingError{Line: i + 1, Msg: "monitor's table output (--format table) inside a JSON-lines file; record with one --format per file"}
			}
			return &RecordingError{Line: i + 1, Msg: fmt.Sprintf("not a monitor sample (%v); the file is damaged or was edited", err)}
		}
		rec.Samples = append(rec.Samples, s)
	}
	return nil
}

func (rec *Recording) readCSV(lines []string, torn bool) error {
	var cols []string
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		last := i == len(lines)-1
		fields, err := csv.NewReader(strings.NewReader(l)).Read()
		if err != nil {
			if last && torn {
				rec.TornLine = true
				return nil
			}
			return &RecordingError{Line: i + 1, Msg: fmt.Sprintf("not a CSV line (%v)", err)}
		}
		if len(fields) >= len(csvFixed) && strings.Join(fields[:len(csvFixed)], ",") == strings.Join(csvFixed, ",") {
			cols = fields[len(csvFixed):] // a header (again, after a restart)
			continue
		}
		if cols == nil {
			return &RecordingError{Line: i + 1, Msg: "a CSV row before the header"}
		}
		if len(fields) != len(csvFixed)+len(cols) {
			if last && torn {
				rec.TornLine = true
				return nil
			}
			return &RecordingError{Line: i + 1, Msg: fmt.Sprintf("%d columns; the header has %d", len(fields), len(csvFixed)+len(cols))}
		}
		t, err := time.Parse(time.RFC3339Nano, fields[0])
		if err != nil {
			if last && torn {
				rec.TornLine = true
				return nil
			}
			return &RecordingError{Line: i + 1, Msg: fmt.Sprintf("time %q is not RFC 3339", fields[0])}
		}
		s := Sample{Time: t, Device: fields[1], Values: map[string]float64{}}
		for j, c := range cols {
			v := fields[len(csvFixed)+j]
			if v == "" {
				continue
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				if last && torn {
					rec.TornLine = true
					return nil
				}
				return &RecordingError{Line: i + 1, Msg: fmt.Sprintf("%s: %q is not a number", c, v)}
			}
			s.Values[c] = x
		}
		rec.Samples = append(rec.Samples, s)
	}
	return nil
}

// CSVHeader reports the header of an existing monitor CSV file, so that a
// monitor appending to it writes rows in those columns instead of a second
// header (pass it as WriterOptions.Header). It returns nil (and no error) when the file does not exist or is
// empty, and an error when it is not a monitor CSV (appending CSV to it
// would mix formats). The header is the last header line of the file (a
// file written before headers were reused may repeat it).
func CSVHeader(path string) ([]string, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("monitor file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxRecordingLine)
	var hdr []string
	n := 0
	for sc.Scan() {
		n++
		l := sc.Text()
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n == 1 && !strings.HasPrefix(l, "time,device,") {
			return nil, &RecordingError{Line: 1, Msg: fmt.Sprintf("%s is not a monitor CSV file (its first line is %q); appending CSV to it would mix formats: write to a new file", path, clip(l))}
		}
		if strings.HasPrefix(l, "time,device,") {
			fields, err := csv.NewReader(strings.NewReader(l)).Read()
			if err != nil {
				return nil, &RecordingError{Line: n, Msg: "a damaged CSV header"}
			}
			hdr = fields
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("monitor file: %w", err)
	}
	return hdr, nil
}

// AppendError refuses to append a run to a file that holds another
// format, or CSV columns the run's rows cannot be placed in. Nothing has
// been written to the file when it is returned.
type AppendError struct {
	Path string
	Msg  string
}

func (e *AppendError) Error() string {
	return fmt.Sprintf("--out %s: %s; give another --out, or remove %s to start it again", e.Path, e.Msg, e.Path)
}

// formatNames say what each format is, for messages.
var formatNames = map[string]string{"jsonl": "JSON lines (--format jsonl)", "csv": "CSV (--format csv)", "table": "monitor's table (--format table)"}

// FileFormat says what an existing file holds, by its first non-blank
// line: "jsonl", "csv" or "table"; "" when the file does not exist or
// holds nothing but blanks; "other" for anything else.
func FileFormat(path string) (string, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("monitor file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxRecordingLine)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "":
			continue
		case strings.HasPrefix(l, "{"):
			return "jsonl", nil
		case strings.HasPrefix(l, "time,device,"):
			return "csv", nil
		case looksLikeTable(l):
			return "table", nil
		}
		return "other", nil
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return "other", nil
		}
		return "", fmt.Errorf("monitor file: %w", err)
	}
	return "", nil
}

// CheckAppend is called before a run appends to path in format: it
// refuses a file that holds another format (a *AppendError), and returns
// the header of a CSV file, for WriterOptions.Header (nil for a new or
// empty file).
func CheckAppend(path, format string) ([]string, error) {
	got, err := FileFormat(path)
	if err != nil || got == "" {
		return nil, err
	}
	if got == "other" {
		short := map[string]string{"jsonl": "JSON-lines", "csv": "CSV", "table": "table"}[format]
		return nil, &AppendError{Path: path, Msg: fmt.Sprintf("the file is not a monitor %s file (nor any file cxray monitor writes), and appending %s to it would mix formats", short, formatNames[format])}
	}
	if got != format {
		return nil, &AppendError{Path: path, Msg: fmt.Sprintf("the file holds %s and this run writes %s, which would mix formats in one file", formatNames[got], formatNames[format])}
	}
	if format != "csv" {
		return nil, nil
	}
	return CSVHeader(path)
}
