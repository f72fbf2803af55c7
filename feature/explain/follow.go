package explain

import (
	"bufio"
	"context"
	"io"
	"strings"
)

// Follower decodes a live kernel log one record at a time: /dev/kmsg
// records ("prio,seq,usec,flags;message", continuation lines starting with
// a space carry the record's dictionary and are skipped) or dmesg lines.
// An event is handed to out once it is complete: a CQE once its dump lines
// are in, an AER report once its bit lines are.
type Follower struct {
	r *klogReader
	n int
}

// NewFollower makes a Follower that hands each decoded event to out.
func NewFollower(dbs Databases, out func(Event)) *Follower {
	return &Follower{r: &klogReader{p: &Part{}, dbs: dbs, devices: map[string]bool{}, sink: out}}
}

// Line decodes one record.
func (f *Follower) Line(l string) {
	l = strings.TrimRight(l, "\r\n")
	if l == "" || l[0] == ' ' {
		return // a kmsg dictionary line ( SUBSYSTEM=pci ...)
	}
	f.n++
	f.r.line(f.n, l)
}

// Flush hands over what is held: a CQE waiting for more dump lines, the
// last event.
func (f *Follower) Flush() {
	f.r.flushCQE()
	f.r.aer = nil
	f.r.release()
}

// Follow reads records from rd until it ends or ctx is done, decoding
// each; the caller closes rd to stop a blocked read. A record lost to the
// ring buffer's overrun (/dev/kmsg's EPIPE) is skipped.
func Follow(ctx context.Context, rd io.Reader, f *Follower) error {
	br := bufio.NewReaderSize(rd, 64<<10)
	for ctx.Err() == nil {
		l, err := br.ReadString('\n')
		if l != "" {
			f.Line(l)
			if br.Buffered() == 0 {
				// Nothing more at hand: what is held is complete as far as
				// the log knows now, except a CQE whose dump may follow.
				if f.r.cqe == nil {
					f.r.aer = nil
					f.r.release()
				}
			}
		}
		if err != nil {
			f.Flush()
			if err == io.EOF || ctx.Err() != nil {
				return nil
			}
			if strings.Contains(err.Error(), "broken pipe") {
				continue
			}
			return err
		}
	}
	f.Flush()
	return nil
}
