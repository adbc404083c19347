package slack

import (
	"bytes"
	"net/url"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdownToMrkdwn turns an agent's Markdown (CommonMark, with ~~strikethrough~~) into Slack
// mrkdwn. Unless allowMentions, every &, < and > of the agent's text is escaped, so no
// text can become Slack markup (<!channel>, <@U…>, <!subteam^…>): only the links
// converted here are. With allowMentions, & is still escaped but < and > outside code
// pass through, so the agent can write <@U0123ABCD> or <!here>.
//
// Slack has no escape for its emphasis characters; a literal *word* in the agent's
// text may render bold there.
func markdownToMrkdwn(md string, allowMentions bool) string {
	src := []byte(md)
	doc := goldmark.New(goldmark.WithExtensions(extension.Strikethrough)).Parser().Parse(text.NewReader(src))
	r := mrkdwnRenderer{src: src, allowMentions: allowMentions}
	r.blocks(doc, "")
	return strings.TrimRight(r.b.String(), "\n ")
}

type mrkdwnRenderer struct {
	src           []byte
	allowMentions bool
	b             strings.Builder
}

// text writes words of the agent's prose.
func (r *mrkdwnRenderer) text(s string) {
	if r.allowMentions {
		r.b.WriteString(strings.ReplaceAll(s, "&", "&amp;"))
		return
	}
	r.b.WriteString(escape(s))
}

// blocks renders the block children of n, each line prefixed (quotes, list indents).
func (r *mrkdwnRenderer) blocks(n ast.Node, prefix string) {
	first := true
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if !first {
			r.b.WriteString("\n")
			if !tightItem(c) {
				r.b.WriteString(strings.TrimRight(prefix, " ") + "\n")
			}
		}
		first = false
		r.block(c, prefix)
	}
}

// tightItem: blocks inside a tight list item are not separated by a blank line.
func tightItem(n ast.Node) bool {
	li, ok := n.Parent().(*ast.ListItem)
	if !ok {
		return false
	}
	l, ok := li.Parent().(*ast.List)
	return ok && l.IsTight
}

func (r *mrkdwnRenderer) block(n ast.Node, prefix string) {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		r.b.WriteString(prefix)
		r.inlines(n, prefix)
	case *ast.Heading:
		// Slack has no headings: a bold line reads as one.
		r.b.WriteString(prefix + "*")
		r.inlines(n, prefix)
		r.b.WriteString("*")
	case *ast.ThematicBreak:
		r.b.WriteString(prefix + "───")
	case *ast.CodeBlock, *ast.FencedCodeBlock:
		r.b.WriteString(prefix + "```\n")
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			r.b.WriteString(prefix + escape(strings.TrimRight(string(seg.Value(r.src)), "\n")) + "\n")
		}
		r.b.WriteString(prefix + "```")
	case *ast.HTMLBlock:
		// Raw HTML is shown as the agent wrote it, never as markup.
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			if i > 0 {
				r.b.WriteString("\n")
			}
			seg := lines.At(i)
			r.b.WriteString(prefix)
			r.text(strings.TrimRight(string(seg.Value(r.src)), "\n"))
		}
	case *ast.Blockquote:
		r.blocks(n, prefix+"> ")
	case *ast.List:
		num := n.Start
		for item := n.FirstChild(); item != nil; item = item.NextSibling() {
			if item != n.FirstChild() {
				r.b.WriteString("\n")
				if !n.IsTight {
					r.b.WriteString(strings.TrimRight(prefix, " ") + "\n")
				}
			}
			marker := "• "
			if n.IsOrdered() {
				marker = strconv.Itoa(num) + ". "
				num++
			}
			r.listItem(item, prefix, marker)
		}
	default:
		r.blocks(n, prefix)
	}
}

// listItem writes the marker before the item's first line and indents the rest.
func (r *mrkdwnRenderer) listItem(item ast.Node, prefix, marker string) {
	var sub mrkdwnRenderer
	sub.src, sub.allowMentions = r.src, r.allowMentions
	sub.blocks(item, "")
	lines := strings.Split(sub.b.String(), "\n")
	indent := strings.Repeat(" ", len([]rune(marker))+2)
	for i, l := range lines {
		if i > 0 {
			r.b.WriteString("\n")
		}
		switch {
		case i == 0:
			r.b.WriteString(prefix + marker + l)
		case l == "":
			r.b.WriteString(strings.TrimRight(prefix, " "))
		default:
			r.b.WriteString(prefix + indent + l)
		}
	}
}

func (r *mrkdwnRenderer) inlines(n ast.Node, prefix string) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(c, prefix)
	}
}

func (r *mrkdwnRenderer) inline(n ast.Node, prefix string) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Segment.Value(r.src)
		if !n.IsRaw() {
			v = resolveMarkdownText(v)
		}
		r.text(string(v))
		switch {
		case n.HardLineBreak(), n.SoftLineBreak():
			// An agent's line breaks are meant as line breaks.
			r.b.WriteString("\n" + prefix)
		}
	case *ast.String:
		v := n.Value
		if !n.IsRaw() && !n.IsCode() {
			v = resolveMarkdownText(v)
		}
		r.text(string(v))
	case *ast.CodeSpan:
		var code bytes.Buffer
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				code.Write(bytes.ReplaceAll(t.Segment.Value(r.src), []byte("\n"), []byte(" ")))
			} else if s, ok := c.(*ast.String); ok {
				code.Write(s.Value)
			}
		}
		// Code is never markup, mentions allowed or not.
		r.b.WriteString("`" + escape(code.String()) + "`")
	case *ast.Emphasis:
		mark := "_"
		if n.Level >= 2 {
			mark = "*"
		}
		r.b.WriteString(mark)
		r.inlines(n, prefix)
		r.b.WriteString(mark)
	case *extast.Strikethrough:
		r.b.WriteString("~")
		r.inlines(n, prefix)
		r.b.WriteString("~")
	case *ast.Link:
		r.link(string(n.Destination), n, prefix)
	case *ast.Image:
		r.link(string(n.Destination), n, prefix)
	case *ast.AutoLink:
		u := string(n.URL(r.src))
		if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(u), "mailto:") {
			u = "mailto:" + u
		}
		r.link(u, nil, prefix)
	case *ast.RawHTML:
		// Inline HTML, and to CommonMark also <!here>: text, escaped unless mentions are
		// allowed.
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			r.text(string(seg.Value(r.src)))
		}
	default:
		r.inlines(n, prefix)
	}
}

// link writes <url|label> for web and mail links; any other destination (javascript:,
// a relative path, Slack's own <!…> commands) is written as escaped text after the
// label, so no link can smuggle markup in.
func (r *mrkdwnRenderer) link(dest string, label ast.Node, prefix string) {
	var sub mrkdwnRenderer
	sub.src, sub.allowMentions = r.src, false // a label never mentions anyone
	if label != nil {
		sub.inlines(label, prefix)
	}
	text := strings.ReplaceAll(sub.b.String(), "|", "¦") // the first | ends Slack's URL
	u, err := url.Parse(dest)
	web := err == nil && (u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "mailto") && u.Opaque+u.Host != ""
	if !web {
		switch {
		case text == "":
			r.b.WriteString(escape(dest))
		case dest == "":
			r.b.WriteString(text)
		default:
			r.b.WriteString(text + " (" + escape(dest) + ")")
		}
		return
	}
	target := slackURL(dest)
	if text == "" || text == escape(dest) || text == escape(strings.TrimPrefix(dest, "mailto:")) {
		r.b.WriteString("<" + target + ">")
		return
	}
	r.b.WriteString("<" + target + "|" + text + ">")
}

// slackURL makes a URL safe inside <…|…>: & escaped as Slack wants, and the characters
// that would end the URL or the markup percent-encoded.
func slackURL(u string) string {
	return strings.NewReplacer("&", "&amp;", "<", "%3C", ">", "%3E", "|", "%7C", " ", "%20").Replace(u)
}

// resolveMarkdownText applies Markdown's backslash escapes and character references,
// as an HTML renderer would, so the agent's \* or &lt; mean what Markdown says.
func resolveMarkdownText(v []byte) []byte {
	return util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
}
