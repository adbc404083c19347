package email

import "bytes"

// maxHeaderBytes bounds the header block, as go-message does by default; past it
// the rest is read as body.
const maxHeaderBytes = 1 << 20

// splitHeader reads the header block of raw leniently, like a mail client: an mbox
// "From " first line is skipped; a line that is not a header field is skipped and
// noted, unless no header field follows it, in which case the header ended without
// its blank line and that line starts the body. It returns the header fields, each
// one or more complete lines, as a block go-message's strict reader accepts (blank
// line included), and the body.
func splitHeader(raw []byte, notes *parseNotes) (header, body []byte) {
	start := 0
	if bytes.HasPrefix(raw, []byte("From ")) && !isField(trimEOL(raw[:lineEnd(raw, 0)])) {
		start = lineEnd(raw, 0)
		notes.add("skipped the mbox \"From \" line")
	}
	// First pass: where the block ends and where its last field starts, so that
	// deciding "skip or body?" for a malformed line needs no look-ahead.
	blockEnd, bodyStart, lastField := len(raw), len(raw), -1
	for pos := start; pos < len(raw); {
		end := lineEnd(raw, pos)
		line := trimEOL(raw[pos:end])
		if len(line) == 0 {
			blockEnd, bodyStart = pos, end
			break
		}
		if end-start > maxHeaderBytes {
			blockEnd, bodyStart = pos, pos
			notes.add("header block longer than %d bytes; the rest is read as body", maxHeaderBytes)
			break
		}
		if isField(line) {
			lastField = pos
		}
		pos = end
	}

	var out bytes.Buffer
	inField := false // the previous line was kept, so a folded line continues it
	for pos, n := start, 1; pos < blockEnd; n++ {
		end := lineEnd(raw, pos)
		line := trimEOL(raw[pos:end])
		switch {
		case isField(line):
			inField = true
			out.Write(line)
			out.WriteString("\r\n")
		case (line[0] == ' ' || line[0] == '\t') && inField:
			out.Write(line)
			out.WriteString("\r\n")
		case pos > lastField:
			// Nothing header-like follows: the body began without a blank line.
			notes.add("header line %d is not a field and no field follows: the body starts there", n)
			return append(out.Bytes(), '\r', '\n'), raw[pos:]
		default:
			inField = false
			notes.add("skipped malformed header line %d: %q", n, cut(string(line), 80))
		}
		pos = end
	}
	out.WriteString("\r\n")
	return out.Bytes(), raw[bodyStart:]
}

// isField reports a "Key: value" line whose key go-message accepts: printable
// ASCII other than the colon, surrounding spaces allowed.
func isField(line []byte) bool {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return false
	}
	key := bytes.Trim(line[:colon], " \t")
	if len(key) == 0 || line[0] == ' ' || line[0] == '\t' {
		return false
	}
	for _, c := range key {
		if c < 33 || c > 126 {
			return false
		}
	}
	return true
}

// lineEnd is the index just past the line starting at pos (its "\n" included).
func lineEnd(b []byte, pos int) int {
	if i := bytes.IndexByte(b[pos:], '\n'); i >= 0 {
		return pos + i + 1
	}
	return len(b)
}

func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r"))
}
