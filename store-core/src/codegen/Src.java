/** Lines of Java source, indented by the blocks they sit in. */
final class Src {

    private final StringBuilder text = new StringBuilder();
    private int depth;

    /** One line at the current depth; formatted only when arguments are given. */
    Src line(String format, Object... args) {
        String body = args.length == 0 ? format : String.format(format, args);
        if (!body.isEmpty()) {
            text.append("    ".repeat(depth)).append(body);
        }
        text.append('\n');
        return this;
    }

    /** A line that opens a block: {@code head {}. */
    Src open(String format, Object... args) {
        line(format + " {", args);
        depth++;
        return this;
    }

    /** Closes the innermost block and opens its {@code else}. */
    Src orElse() {
        depth--;
        line("} else {");
        depth++;
        return this;
    }

    /** Closes the innermost block. */
    Src close() {
        depth--;
        return line("}");
    }

    /** A javadoc comment of one or more lines. */
    Src doc(String... lines) {
        if (lines.length == 1) {
            return line("/** %s */", lines[0]);
        }
        line("/**");
        for (String l : lines) {
            line(l.isEmpty() ? " *" : " * " + l);
        }
        return line(" */");
    }

    String text() {
        return text.toString();
    }
}
