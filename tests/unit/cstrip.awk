# cstrip.awk — C source without its comments and the contents of its string and character literals (the
# quotes stay: "" and ''), a line at a time: the awk function strip() that include_graph.sh and
# tests/cli/tools_layout.sh put in front of their programs. It keeps a block comment's state across lines
# in `incomment` (a caller resets it at each file's first line).
function strip(line,    out, i, c, n) {
	out = ""
	n = length(line)
	for (i = 1; i <= n; i++) {
		c = substr(line, i, 1)
		if (incomment) {
			if (c == "*" && substr(line, i + 1, 1) == "/") { incomment = 0; i++ }
			continue
		}
		if (quote != "") {
			if (c == "\\") i++
			else if (c == quote) { quote = ""; out = out c }
			continue
		}
		if (c == "/" && substr(line, i + 1, 1) == "*") { incomment = 1; i++; continue }
		if (c == "/" && substr(line, i + 1, 1) == "/") break
		if (c == "\"" || c == "\047") quote = c
		out = out c
	}
	quote = ""
	return out
}
