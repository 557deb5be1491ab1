package dev.nepenthe.core.internal.engine;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * How the forget's join-key check reads text: a metadata value is a key as a whole and by each of
 * its tokens, so that a forgotten id inside a list written into one value ("alice, bob", "[u-17,
 * u-42]") is found like a value of its own; a declared identifier (a name, an email, a phone number
 * the subject is known by) is found as a run of tokens, or of digits for a phone number, in
 * metadata and text.
 */
public final class JoinKeys {

    private JoinKeys() {}

    /** A value as join keys compare it: surrounding blanks dropped, case ignored. */
    public static String fold(String value) {
        return value.strip().toLowerCase(Locale.ROOT);
    }

    /**
     * The keys a metadata value is looked up by: the folded whole value, then each token. A token
     * is a run of letters, digits and the characters ids and emails are made of ({@code @ . _ +
     * -}), with dots and dashes trimmed from its ends.
     */
    public static Set<String> keysOf(String value) {
        Set<String> keys = new LinkedHashSet<>();
        String folded = fold(value);
        if (!folded.isEmpty()) {
            keys.add(folded);
        }
        keys.addAll(tokens(folded));
        return keys;
    }

    /** The folded tokens of a text, in order. */
    public static List<String> tokens(String text) {
        List<String> out = new ArrayList<>();
        int n = text.length();
        int i = 0;
        while (i < n) {
            while (i < n && !isTokenChar(text.charAt(i))) {
                i++;
            }
            int start = i;
            while (i < n && isTokenChar(text.charAt(i))) {
                i++;
            }
            int a = start;
            int b = i;
            while (a < b && isTrimmed(text.charAt(a))) {
                a++;
            }
            while (b > a && isTrimmed(text.charAt(b - 1))) {
                b--;
            }
            if (a < b) {
                out.add(text.substring(a, b).toLowerCase(Locale.ROOT));
            }
        }
        return out;
    }

    private static boolean isTokenChar(char c) {
        return Character.isLetterOrDigit(c)
                || c == '@'
                || c == '.'
                || c == '_'
                || c == '+'
                || c == '-';
    }

    private static boolean isTrimmed(char c) {
        return c == '.' || c == '-' || c == '_' || c == '+';
    }

    /**
     * A declared identifier of a subject, normalised: a phone number (seven or more digits and
     * nothing but phone punctuation) as its digits, anything else as its tokens.
     */
    public record Identifier(List<String> tokens, String digits) {

        public static Identifier of(String declared) {
            String s = declared.strip();
            int digitCount = 0;
            boolean phoneLike = !s.isEmpty();
            StringBuilder digits = new StringBuilder();
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c >= '0' && c <= '9') {
                    digitCount++;
                    digits.append(c);
                } else if (" +-().".indexOf(c) < 0) {
                    phoneLike = false;
                }
            }
            if (phoneLike && digitCount >= 7) {
                return new Identifier(List.of(), digits.toString());
            }
            List<String> t = JoinKeys.tokens(s);
            if (t.isEmpty()) {
                throw new IllegalArgumentException(
                        "declared identifier: expected a name, an email or a phone number"
                                + " with at least one letter or digit, got "
                                + s.length()
                                + " characters without any");
            }
            return new Identifier(t, null);
        }

        /**
         * One spelling per identifier as it matches, for keyed hashing: {@code tel:} and the digits
         * of a phone number, else the folded tokens separated by single spaces.
         */
        public String canonical() {
            return digits != null ? "tel:" + digits : String.join(" ", tokens);
        }

        /** Whether {@code text} holds this identifier: its tokens in a row, or its phone digits. */
        public boolean foundIn(String text) {
            if (digits != null) {
                for (String run : digitRuns(text)) {
                    if (run.equals(digits)
                            || (run.length() >= 7 && digits.endsWith(run))
                            || (digits.length() >= 7 && run.endsWith(digits))) {
                        return true;
                    }
                }
                return false;
            }
            List<String> t = JoinKeys.tokens(text);
            for (int i = 0; i + tokens.size() <= t.size(); i++) {
                if (t.subList(i, i + tokens.size()).equals(tokens)) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * Runs of digits that may be broken by single spaces or phone punctuation ("+1 (555)
     * 123-4567").
     */
    public static List<String> digitRuns(String text) {
        List<String> out = new ArrayList<>();
        StringBuilder run = new StringBuilder();
        int gap = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c >= '0' && c <= '9') {
                run.append(c);
                gap = 0;
            } else if (" +-().".indexOf(c) >= 0 && run.length() > 0 && gap < 2) {
                gap++;
            } else if (" +(".indexOf(c) < 0 || run.length() > 0) {
                if (run.length() > 0) {
                    out.add(run.toString());
                }
                run.setLength(0);
                gap = 0;
            }
        }
        if (run.length() > 0) {
            out.add(run.toString());
        }
        return out;
    }
}
