package load

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/signalgate/signalgate/inbox"
)

// openStream opens k's signal stream under base: resuming after the frame last when
// resume is set, else from the thread's newest frame (?after=latest).
func openStream(ctx context.Context, client *http.Client, base, token string, k inbox.ThreadKey, last int64, resume bool) (io.ReadCloser, error) {
	u := ThreadURL(base, k, "/stream")
	if !resume {
		u += "?after=latest"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	if resume {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(last, 10))
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("stream %s: %s: %s", k, resp.Status, b)
	}
	return resp.Body, nil
}

// readEvents hands each server-sent event of body to event (its id, event name and data,
// any of them empty) until the body ends; the end is io.ErrUnexpectedEOF, since a stream
// never ends on its own.
func readEvents(body io.Reader, event func(id, name, data string)) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var id, name, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			event(id, name, data)
			id, name, data = "", "", ""
		case strings.HasPrefix(line, "id: "):
			id = line[4:]
		case strings.HasPrefix(line, "event: "):
			name = line[7:]
		case strings.HasPrefix(line, "data: "):
			data = line[6:]
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}
