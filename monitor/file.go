package monitor

import (
	"bytes"
	"fmt"
	"io"
	"os"
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
