package email

import (
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
)

// corpusDir holds CPython's email test messages as Debian's libpython3.11-testsuite
// installs them: real-world mail, much of it malformed on purpose (mbox From lines,
// a missing header/body separator, broken boundaries). .ci/run installs the package
// and sets envMailCorpus, which makes a missing corpus a failure, not a skip.
const (
	corpusDir     = "/usr/lib/python3.11/test/test_email/data"
	envMailCorpus = "SIGNALGATE_TEST_MAIL_CORPUS"
)

// corpusFiles lists the messages of the corpus, skipping the test when the corpus is
// not installed (and not required).
func corpusFiles(t *testing.T) []string {
	t.Helper()
	dir := cmp.Or(os.Getenv(envMailCorpus), corpusDir)
	files, err := filepath.Glob(filepath.Join(dir, "msg_*.txt"))
	require.NoError(t, err)
	if len(files) == 0 {
		if os.Getenv(envMailCorpus) != "" {
			t.Fatalf("%s=%s holds no msg_*.txt", envMailCorpus, dir)
		}
		t.Skipf("no mail corpus in %s: install Debian's libpython3.11-testsuite (.ci/run does)", dir)
	}
	return files
}

// What a mail client shows for each message: the sender's address (the raw From when
// it has none), the subject, and a piece of the text; "" where the message has none.
var corpusWant = map[string]struct{ from, subject, text string }{
	"msg_01.txt":  {"bbb@ddd.com", "This is a test message", "Do you like this message?"},
	"msg_02.txt":  {"ppp-request@zzz.org", "Ppp digest, Vol 1 #2 - 5 msgs", "Send Ppp mailing list submissions to"},
	"msg_03.txt":  {"bbb@ddd.com", "This is a test message", "Do you like this message?"},
	"msg_04.txt":  {"barry@python.org", "a simple multipart", "a simple kind of mirror"},
	"msg_05.txt":  {"foo", "bar", "Yadda yadda yadda"},
	"msg_06.txt":  {"barry@python.org", "forwarded message from Barry A. Warsaw", ""},
	"msg_07.txt":  {"barry@digicool.com", "Here is your dingus fish", "This is the dingus fish."},
	"msg_08.txt":  {"barry@python.org", "Lyrics", ""},
	"msg_09.txt":  {"barry@python.org", "Lyrics", ""},
	"msg_10.txt":  {"barry@python.org", "Lyrics", "This is a 7bit encoded message."},
	"msg_11.txt":  {"", "The enclosing message", "Here is the body of the message."},
	"msg_12.txt":  {"barry@python.org", "Lyrics", ""},
	"msg_12a.txt": {"barry@python.org", "Lyrics", ""},
	"msg_13.txt":  {"barry@digicool.com", "Here is your dingus fish", "A text/plain part"},
	"msg_14.txt":  {"bbb@ddd.com", "This is a test message", "I'm sorry but I'm using a drainbread ISP"},
	"msg_15.txt":  {"xx@xx.dk", "XX", "Some removed test."},
	"msg_16.txt":  {"postmaster@ucla.edu", "Delivery Notification: Delivery has failed", "This report relates to a message you sent"},
	"msg_17.txt":  {"barry@digicool.com", "Here is your dingus fish", "This is the dingus fish."},
	"msg_18.txt":  {"", "", ""},
	"msg_19.txt":  {"", "", "Send Ppp mailing list submissions to"},
	"msg_20.txt":  {"bbb@ddd.com", "This is a test message", "Do you like this message?"},
	"msg_21.txt":  {"aperson@dom.ain", "Test", "One"},
	"msg_22.txt":  {"b@example.com", "", "Text text text."},
	"msg_23.txt":  {"aperson@dom.ain", "", "A message part"},
	"msg_24.txt":  {"bperson@dom.ain", "A subject", ""},
	"msg_25.txt": {"mailer-daemon@zinfandel.lacita.com", "Returned mail: Too many hops 19 (17 max): from <linuxuser-admin@www.linux.org.uk> " +
		"via [199.164.235.226], to <scoffman@wellpartner.com>", "Too many hops 19 (17 max)"},
	"msg_26.txt": {"father.time@xcar.wooster.local", "IMAP file test", "Simple email with attachment."},
	"msg_27.txt": {"aperson@dom.ain", "bug demonstration 12345678911234567892123456789312345678941234567895123456789612345678971234567898" +
		"112345678911234567892123456789112345678911234567892123456789 more text", "test"},
	"msg_28.txt": {"aperson@dom.ain", "", "message 1"},
	"msg_29.txt": {"bbb@ddd.com", "This is a test message", "Do you like this message?"},
	"msg_30.txt": {"aperson@dom.ain", "", "message 1"},
	"msg_31.txt": {"aperson@dom.ain", "", "message 1"},
	"msg_32.txt": {"aperson@example.com", "Re: Limiting Perl CPU Utilization...", "Some message."},
	"msg_33.txt": {"aperson@example.com", "Re: Limiting Perl CPU Utilization...", "part 1"},
	"msg_34.txt": {"aperson@dom.ain", "", "This is a text plain part that is counter to recom"},
	"msg_35.txt": {"aperson@dom.ain", "here's something interesting", "counter to RFC 2822, there's no separating newline here"},
	"msg_36.txt": {"internet-drafts@ietf.org", "I-D ACTION:draft-ietf-mboned-mix-00.txt", "Blah blah blah"},
	"msg_37.txt": {"", "", "Blah"},
	"msg_38.txt": {"", "", "Unlike the test test_nested-multiples-with-internal-boundary"},
	"msg_39.txt": {"", "", "It's never too late to have a happy childhood."},
	"msg_40.txt": {"", "", "----961284236552522269"},
	"msg_41.txt": {"xxx@example.com", "64423", "Blah blah blah"},
	"msg_42.txt": {"xxx@example.com", "", "Stuff"},
	"msg_43.txt": {"MAILER DAEMON <>", "Banned file: auto__mail.python.bat in mail from you", "BANNED FILENAME ALERT"},
	"msg_44.txt": {"barry@python.org", "a simple multipart", "a simple kind of mirror"},
	"msg_45.txt": {"foo@bar.baz", "test", "This is the signed contents."},
	"msg_46.txt": {"sender@example.net", "GroupwiseForwardingTest", "Testing email forwarding with Groupwise 1.2.2010"},
}

// Every message of the corpus is stored readable, never invalid, through the same
// path the mailbox worker takes, with its sender, subject and text as far as they
// exist.
func TestMailCorpusReadable(t *testing.T) {
	files := corpusFiles(t)
	require.Len(t, files, len(corpusWant), "an expectation for every message of the corpus")
	p, err := NewPoller(testConfig("127.0.0.1:1"), &recorder{}, storeless{}, service.Base{Now: fixedClock})
	require.NoError(t, err)
	w := p.workers[0]
	e := newEnv(t)

	read := 0
	for i, f := range files {
		name := filepath.Base(f)
		want, ok := corpusWant[name]
		require.True(t, ok, name)
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		ev, items := w.event(raw, false, 1, uint32(i+1), time.Time{})
		out, err := e.rec.Ingest(context.Background(), ev, items)
		require.NoError(t, err, name)
		if !assert.NotEqual(t, inbox.EventInvalid, out.Status, "%s: %s", name, ev.Error) || !assert.Len(t, items, 1, name) {
			continue
		}
		var pl struct {
			From    struct{ Address string } `json:"from"`
			FromRaw string                   `json:"from_raw"`
			Subject string                   `json:"subject"`
			Text    string                   `json:"text"`
		}
		require.NoError(t, json.Unmarshal(items[0].Payload, &pl), name)
		ok = assert.Equal(t, want.from, pl.From.Address+pl.FromRaw, "%s: from", name)
		ok = assert.Equal(t, want.subject, pl.Subject, "%s: subject", name) && ok
		if want.text == "" {
			ok = assert.Empty(t, pl.Text, "%s: text", name) && ok
		} else {
			ok = assert.Contains(t, pl.Text, want.text, "%s: text", name) && ok
		}
		if ok {
			read++
		}
	}
	t.Logf("%d of %d messages of %s read", read, len(files), filepath.Dir(files[0]))
	assert.NotZero(t, e.events())
}

// The corpus's mbox-style messages keep a note of what was skipped.
func TestMailCorpusNotes(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(corpusFiles(t)[0]), "msg_43.txt"))
	require.NoError(t, err)
	m, err := parseMessage(raw, false, fixedClock)
	require.NoError(t, err)
	assert.Equal(t, []string{`skipped the mbox "From " line`}, m.Notes.all())
	assert.True(t, strings.HasPrefix(m.MessageID, "edab."), m.MessageID)
}
