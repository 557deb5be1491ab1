package dev.nepenthe.server.grpc;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Server file paths taken out of what a tenant reads: a status's description, an operation's note,
 * a surface's problems and residual. The store's messages name the files they are about, which is
 * what an operator needs (the server's log keeps them), but the layout of the server's disks is
 * none of a tenant's business. An absolute path (one that starts a word with {@code /}, or a drive
 * letter and a backslash) becomes {@value #MARK}. Receipts are signed and never rewritten; nothing
 * the store puts in one names a path.
 */
final class Redaction {

    static final String MARK = "<server path>";

    /** An absolute path starting a word, up to the next space, quote, bracket or separator. */
    private static final Pattern PATH =
            Pattern.compile("(?<=^|[\\s'\"(\\[=,])(?:/|[A-Za-z]:\\\\)[^\\s'\"()\\[\\],;]+");

    private Redaction() {}

    static String paths(String s) {
        return s == null ? null : PATH.matcher(s).replaceAll(MARK);
    }

    static List<String> paths(List<String> s) {
        return s.stream().map(Redaction::paths).toList();
    }
}
