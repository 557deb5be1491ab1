package dev.nepenthe.bench.data;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;

/**
 * Short definition texts from Debian's {@code dict-gcide} (the Collaborative International
 * Dictionary of English, dictd format: a gzip/dictzip text file plus an index of headword, base64
 * offset and length per entry).
 *
 * <p>The rules, applied to every distinct entry the index names (the {@code 00-database-*} entries,
 * which hold the licence text, are skipped):
 *
 * <ol>
 *   <li>An entry splits into blocks at blank lines. Lines that are only a source tag in brackets
 *       ({@code [1913 Webster]}, {@code [WordNet 1.5 +PJC]}, {@code [AS]}) are dropped.
 *   <li>A block that starts indented 6 or more columns is a quotation or a continued citation, not
 *       a definition: skipped. So are {@code Syn:}, {@code Note:} and {@code Usage:} blocks.
 *   <li>The entry's first block starts with its head (headword, {@code \pronunciation\}, part of
 *       speech, bracketed etymology). Everything up to the end of the pronunciation and then any
 *       run of part-of-speech abbreviations, bracketed or parenthesised groups (balanced:
 *       etymologies nest brackets), and further headwords with their own pronunciation, is removed;
 *       what follows is the first sense.
 *   <li>In what is left: a leading sense number ({@code 1.}, {@code (a)}) and leading parenthesised
 *       labels ({@code (Zool.)}) are removed; so are a citation ({@code --Shak.}) with everything
 *       after it (quoted examples and their sources) and usage tags ({@code [Obs.]}, {@code [R.]});
 *       cross-reference braces {@code {Word}} keep their word; GCIDE's markup for special letters
 *       ({@code [ae]}) is left as it is; whitespace is collapsed.
 *   <li>A text is kept if it has at least 3 words and 20 to 200 characters (short texts, as in a
 *       store of notes); exact duplicates after these steps are kept once, first occurrence wins.
 * </ol>
 *
 * The result is in file order; callers shuffle it with a seed.
 */
public final class GcideDefinitions {

    /** Bump when the rules above change: cached vectors name it. */
    public static final int RULES_VERSION = 1;

    public static final Path DEFAULT_DICT = Path.of("/usr/share/dictd/gcide.dict.dz");

    private static final Pattern SOURCE_TAG = Pattern.compile("^\\s*\\[[^\\]]*\\]\\s*$");
    private static final Pattern PRONUNCIATION = Pattern.compile("^[^\\\\]*\\\\[^\\\\]*\\\\");
    private static final Pattern HEAD_WORD =
            Pattern.compile(
                    "^(?:[,;&]|[a-z]{1,5}\\.|(?:or|and)\\s|[A-Za-z][^\\\\\\[\\]().]{0,40}\\\\[^\\\\]*\\\\)");
    private static final Pattern SENSE_NUMBER = Pattern.compile("^\\s*(?:\\d+\\.|\\([a-z]\\))\\s*");
    private static final Pattern LEADING_LABEL = Pattern.compile("^\\s*\\([^)]{1,40}\\)\\s*");
    private static final Pattern CITATION = Pattern.compile("\\s--[A-Z].*$");
    private static final Pattern USAGE_TAG =
            Pattern.compile(
                    "\\s*\\[(?:Obs|R|Colloq|Archaic|Local|Eng|Scot|U\\.\\s?S|Prov\\.\\s?Eng|Poetic|Slang|Cant|Vulgar|Law|Dial)[^\\]]{0,20}\\]");
    private static final Pattern BRACES = Pattern.compile("\\{([^}]*)\\}");
    private static final Pattern SPACES = Pattern.compile("\\s+");

    private GcideDefinitions() {}

    /** The whole decompressed dictionary; costs about 40 MB of heap for a moment. */
    public static byte[] readDict(Path dictDz) throws IOException {
        try (InputStream in = new GZIPInputStream(Files.newInputStream(dictDz), 1 << 16)) {
            return in.readAllBytes();
        }
    }

    /**
     * Definitions of the dictionary at {@code dictDz}, with its index next to it ({@code .dict.dz}
     * to {@code .index}).
     */
    public static List<String> parse(Path dictDz) throws IOException {
        String name = dictDz.getFileName().toString();
        if (!name.endsWith(".dict.dz")) {
            throw new IllegalArgumentException(
                    "expected a dictd file named *.dict.dz, got " + dictDz);
        }
        Path index =
                dictDz.resolveSibling(
                        name.substring(0, name.length() - ".dict.dz".length()) + ".index");
        return parse(readDict(dictDz), Files.readAllLines(index, StandardCharsets.UTF_8));
    }

    static List<String> parse(byte[] dict, List<String> indexLines) {
        Set<String> out = new LinkedHashSet<>();
        Set<Long> seenEntries = new HashSet<>();
        for (String line : indexLines) {
            String[] f = line.split("\t", -1);
            if (f.length < 3 || f[0].startsWith("00-database") || f[0].startsWith("00database")) {
                continue;
            }
            long offset = base64(f[1]);
            int length = (int) base64(f[2]);
            if (!seenEntries.add(offset) || offset + length > dict.length) {
                continue;
            }
            String entry = new String(dict, (int) offset, length, StandardCharsets.UTF_8);
            for (String def : definitionsOf(entry)) {
                out.add(def);
            }
        }
        return new ArrayList<>(out);
    }

    /** dictd's base64 number: digits A-Z a-z 0-9 + /, most significant first. */
    static long base64(String s) {
        long v = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            int d;
            if (c >= 'A' && c <= 'Z') {
                d = c - 'A';
            } else if (c >= 'a' && c <= 'z') {
                d = c - 'a' + 26;
            } else if (c >= '0' && c <= '9') {
                d = c - '0' + 52;
            } else if (c == '+') {
                d = 62;
            } else if (c == '/') {
                d = 63;
            } else {
                throw new IllegalArgumentException(
                        "dictd index: expected a base64 number, got '" + s + "'");
            }
            v = v * 64 + d;
        }
        return v;
    }

    static List<String> definitionsOf(String entry) {
        List<String> defs = new ArrayList<>();
        List<List<String>> blocks = new ArrayList<>();
        List<String> cur = new ArrayList<>();
        for (String line : entry.split("\n", -1)) {
            if (line.isBlank()) {
                if (!cur.isEmpty()) {
                    blocks.add(cur);
                    cur = new ArrayList<>();
                }
            } else if (!SOURCE_TAG.matcher(line).matches()) {
                cur.add(line);
            }
        }
        if (!cur.isEmpty()) {
            blocks.add(cur);
        }
        for (int b = 0; b < blocks.size(); b++) {
            List<String> block = blocks.get(b);
            String first = block.get(0);
            int indent = first.length() - first.stripLeading().length();
            String text = String.join(" ", block).strip();
            if (indent == 0) {
                // 3. the head
                Matcher p = PRONUNCIATION.matcher(text);
                if (!p.find()) {
                    continue;
                }
                text = text.substring(p.end());
                text = text.substring(headLength(text));
            } else if (indent >= 6) {
                continue;
            }
            if (text.startsWith("Syn:") || text.startsWith("Note:") || text.startsWith("Usage:")) {
                continue;
            }
            String def = clean(text);
            if (def.length() >= 20 && def.length() <= 200 && def.split(" ").length >= 3) {
                defs.add(def);
            }
        }
        return defs;
    }

    /**
     * Length of what is left of a head after its pronunciation: part-of-speech abbreviations,
     * balanced bracketed or parenthesised groups (etymologies nest brackets), and further headwords
     * with their own pronunciation.
     */
    static int headLength(String text) {
        int i = 0;
        while (true) {
            while (i < text.length() && Character.isWhitespace(text.charAt(i))) {
                i++;
            }
            if (i >= text.length()) {
                return i;
            }
            char c = text.charAt(i);
            if (c == '[' || c == '(') {
                char close = c == '[' ? ']' : ')';
                int depth = 0;
                int j = i;
                for (; j < text.length(); j++) {
                    char x = text.charAt(j);
                    if (x == c) {
                        depth++;
                    } else if (x == close && --depth == 0) {
                        break;
                    }
                }
                i = Math.min(j + 1, text.length());
                continue;
            }
            Matcher w = HEAD_WORD.matcher(text).region(i, text.length());
            if (w.lookingAt()) {
                i = w.end();
                continue;
            }
            return i;
        }
    }

    private static String clean(String text) {
        String s = SENSE_NUMBER.matcher(text).replaceFirst("");
        for (Matcher l = LEADING_LABEL.matcher(s); l.find(); l = LEADING_LABEL.matcher(s)) {
            s = s.substring(l.end());
        }
        s = CITATION.matcher(s).replaceAll("");
        s = USAGE_TAG.matcher(s).replaceAll("");
        s = BRACES.matcher(s).replaceAll("$1");
        return SPACES.matcher(s).replaceAll(" ").strip();
    }
}
