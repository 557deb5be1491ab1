package dev.nepenthe.core.internal.text;

import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.Keystore;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.IntPoint;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.ConcurrentMergeScheduler;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexCommit;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.StandardDirectoryReader;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.TieredMergePolicy;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.ConstantScoreQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.SearcherManager;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.NIOFSDirectory;
import org.roaringbitmap.RoaringBitmap;

/**
 * A collection's text index: one Lucene document per record that has text, holding the analyzed
 * text (BM25, Lucene's default similarity), the record's ordinal and its version (the storage's
 * write sequence number). Nothing else: no id, tenant, subject or metadata reaches Lucene's files.
 * Tenant, subject and metadata filters are the collection's bitmaps, applied as documents are
 * collected, so keyword search narrows exactly as vector search does. The files are encrypted, each
 * under its own key ({@link EncryptedDirectory}).
 *
 * <p>Consistency with the records: writes reach Lucene under the collection's writer mutex in the
 * same steps as the vector index, and a refresh makes them searchable before the write returns.
 * Lucene commits at checkpoints, deletes, forgets and close; what a crash loses past the last
 * commit is found at the next open by {@link #reconcile}, which compares every document's (ordinal,
 * version) with the records and deletes or adds what differs.
 *
 * <p>Thread safety: writes come from the collection's writer (one at a time); searches from any
 * thread, through a {@link SearcherManager}.
 */
public final class TextIndex implements Closeable {

    static final String ORD = "ord";
    static final String VERSION = "version";
    static final String TEXT = "text";

    /** A segment holding a forgotten document is rewritten whole: bound how large one may grow. */
    static final double MAX_SEGMENT_MB = 256;

    /** At most this many distinct query terms (Lucene's default clause limit is 1024). */
    static final int MAX_QUERY_TERMS = 1024;

    /** Shorter terms are not byte-scanned for: three bytes turn up by chance in any binary file. */
    static final int MIN_TERM_BYTES = 4;

    /**
     * Most extra rounds {@link #mergeDeletesAway} merges while natural merges carry deletes over.
     */
    static final int MERGE_ROUNDS = 10;

    private final String analyzerName;
    private final Analyzer analyzer;
    private final EncryptedDirectory dir;
    private final Keystore keystore;
    private final IndexWriter writer;
    private final SearcherManager searchers;
    private final Path folder;
    private final ConcurrentMergeScheduler merges = new ConcurrentMergeScheduler();
    private boolean closed;

    private TextIndex(Path folder, String analyzerName, EncryptedDirectory dir, Keystore keystore)
            throws IOException {
        this.folder = folder;
        this.analyzerName = analyzerName;
        this.analyzer = Analyzers.create(analyzerName);
        this.dir = dir;
        this.keystore = keystore;
        IndexWriterConfig config = new IndexWriterConfig(analyzer);
        TieredMergePolicy policy = new TieredMergePolicy();
        // A forget must leave no deleted document in any segment, so any segment holding one is
        // rewritten (Lucene's default skips segments under 10% deleted).
        policy.setForceMergeDeletesPctAllowed(0);
        policy.setMaxMergedSegmentMB(MAX_SEGMENT_MB);
        config.setMergePolicy(policy);
        config.setMergeScheduler(this.merges);
        config.setCommitOnClose(false);
        this.writer = new IndexWriter(dir, config);
        try {
            this.searchers = new SearcherManager(writer, true, false, null);
        } catch (IOException | RuntimeException e) {
            writer.rollback(); // releases the folder's write lock
            throw e;
        }
    }

    /**
     * Opens (creating if needed) the text index in {@code folder}.
     *
     * @param collectionId the collection's incarnation id: file keys are scoped by it
     */
    public static TextIndex open(
            Path folder, String analyzer, Keystore keystore, KeyedHash hashes, String collectionId)
            throws IOException {
        Files.createDirectories(folder);
        Directory raw = new NIOFSDirectory(folder);
        EncryptedDirectory dir = new EncryptedDirectory(raw, keystore, hashes, collectionId);
        try {
            return new TextIndex(folder, analyzer, dir, keystore);
        } catch (IOException | RuntimeException e) {
            dir.close();
            throw e;
        }
    }

    /**
     * Destroys the keys of every file in a text index folder and deletes the files (a dropped
     * collection). The index must not be open.
     */
    public static void destroyFolder(
            Path folder, Keystore keystore, KeyedHash hashes, String collectionId)
            throws IOException {
        if (!Files.isDirectory(folder)) {
            return;
        }
        try (EncryptedDirectory dir =
                new EncryptedDirectory(
                        new NIOFSDirectory(folder), keystore, hashes, collectionId)) {
            deleteFiles(dir);
        }
        keystore.force();
    }

    /**
     * What {@link #scanPlaintext} found: needle counts by file, and the files it could not decrypt.
     */
    public record FolderScan(Map<String, Integer> hits, List<String> unreadable) {}

    /**
     * Decrypts every file of a text index folder (a live one or a copy) with the keystore and
     * counts the needles in each plaintext: the forensic view of what the folder would reveal to
     * someone holding the keys. A file whose key is gone (destroyed when the file was deleted) is
     * listed as unreadable.
     */
    public static FolderScan scanPlaintext(
            Path folder,
            Keystore keystore,
            KeyedHash hashes,
            String collectionId,
            List<byte[]> needles)
            throws IOException {
        try (EncryptedDirectory dir =
                new EncryptedDirectory(
                        new NIOFSDirectory(folder), keystore, hashes, collectionId)) {
            return TextForensics.scanPlaintext(dir, needles);
        }
    }

    public String analyzer() {
        return analyzerName;
    }

    public Path folder() {
        return folder;
    }

    /** Indexes one record's text (the caller removed any older document at this ordinal). */
    public void add(int ordinal, long version, String text) throws IOException {
        Document d = new Document();
        d.add(new IntPoint(ORD, ordinal));
        d.add(new NumericDocValuesField(ORD, ordinal));
        d.add(new LongPoint(VERSION, version));
        d.add(new NumericDocValuesField(VERSION, version));
        d.add(new TextField(TEXT, text, Field.Store.NO));
        writer.addDocument(d);
    }

    /**
     * Deletes the documents of these ordinals (marked deleted; {@link #mergeDeletesAway} removes
     * their bytes).
     */
    public void delete(int[] ordinals) throws IOException {
        if (ordinals.length > 0) {
            writer.deleteDocuments(IntPoint.newSetQuery(ORD, ordinals));
        }
    }

    /** Makes every write so far searchable (before the write that made it returns). */
    public void publish() throws IOException {
        searchers.maybeRefreshBlocking();
    }

    /**
     * Waits until no merge runs (nor one a finished merge started). Called with the collection's
     * writer mutex held, so no write starts another.
     */
    public void awaitMerges() {
        merges.sync();
    }

    /** Makes every write so far durable. */
    public void commit() throws IOException {
        writer.commit();
    }

    /**
     * Rewrites every segment that holds a deleted document, commits, and lets go of the old
     * segments (their files are deleted and their keys destroyed, durably): afterwards no file
     * holds a deleted document's terms.
     *
     * @return how many deleted documents the rewritten segments dropped
     */
    public int mergeDeletesAway() throws IOException {
        int deleted = deletedDocuments();
        // A merge the writer started on its own before the deletes arrived is skipped by
        // forceMergeDeletes, and when it finishes its new segment carries those deletes over: so
        // wait for the writer's own merges and merge again until the segments, as a fresh reader
        // sees them, hold no deleted document. (The writer's hasDeletions() is no test: it stays
        // true for buffered deletes that matched nothing.)
        for (int round = 0; ; round++) {
            writer.forceMergeDeletes(true);
            writer.commit();
            // The reader that still named the old segments is replaced; once released, the
            // writer deletes their files.
            searchers.maybeRefreshBlocking();
            int left = deletedDocuments();
            if (left == 0) {
                break;
            }
            if (round == MERGE_ROUNDS) {
                throw new IOException(
                        "text index: expected no deleted documents after "
                                + MERGE_ROUNDS
                                + " rounds of merging them away, got "
                                + left
                                + " still held");
            }
            merges.sync();
        }
        writer.deleteUnusedFiles();
        keystore.force();
        return deleted;
    }

    private int deletedDocuments() throws IOException {
        IndexSearcher s = searchers.acquire();
        try {
            return s.getIndexReader().numDeletedDocs();
        } finally {
            searchers.release(s);
        }
    }

    /** Documents in the index, deleted ones excluded, as last published. */
    public int size() {
        try {
            IndexSearcher s = searchers.acquire();
            try {
                return s.getIndexReader().numDocs();
            } finally {
                searchers.release(s);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Ordinals and BM25 scores, best first. */
    public static final class Ranked {
        private final int[] ordinals;
        private final float[] scores;

        public Ranked(int[] ordinals, float[] scores) {
            this.ordinals = ordinals;
            this.scores = scores;
        }

        public int[] ordinals() {
            return ordinals;
        }

        public float[] scores() {
            return scores;
        }

        public int size() {
            return ordinals.length;
        }
    }

    /** The query text's analyzed terms, distinct, in order of appearance. */
    public List<String> terms(String text) {
        Set<String> out = new LinkedHashSet<>();
        try (TokenStream ts = analyzer.tokenStream(TEXT, text)) {
            CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
            ts.reset();
            while (ts.incrementToken() && out.size() < MAX_QUERY_TERMS) {
                out.add(term.toString());
            }
            ts.end();
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "analysing text failed", e); // a StringReader does not fail
        }
        return new ArrayList<>(out);
    }

    /**
     * BM25 search: documents matching any of the query's terms, scored by Lucene's BM25, among the
     * accepted ordinals (null: all).
     */
    public Ranked search(String query, RoaringBitmap accept, int k) throws IOException {
        List<String> terms = terms(query);
        if (terms.isEmpty()) {
            return new Ranked(new int[0], new float[0]);
        }
        BooleanQuery.Builder b = new BooleanQuery.Builder();
        for (String t : terms) {
            b.add(new TermQuery(new Term(TEXT, t)), BooleanClause.Occur.SHOULD);
        }
        return run(b.build(), accept, k);
    }

    private Ranked run(Query q, RoaringBitmap accept, int k) throws IOException {
        IndexSearcher s = searchers.acquire();
        try {
            return FilteredSearch.run(s, q, accept, k);
        } finally {
            searchers.release(s);
        }
    }

    // ---- consistency with the records -------------------------------------------------------

    /**
     * The records as the collection holds them: for each ordinal, its version and text (null:
     * none).
     */
    public interface Records {
        /** The live record's version at this ordinal, or -1 if there is none. */
        long version(int ordinal);

        /** The text of the live record at this ordinal, or null. */
        String text(int ordinal);

        /** Every live ordinal. */
        int[] ordinals();
    }

    /** What {@link #reconcile} changed: documents deleted, documents added. */
    public record Reconciled(int removed, int added) {}

    /**
     * Makes the index hold exactly one document per live record with text, at the record's version:
     * documents of records deleted or replaced since the last commit are deleted (and merged away),
     * records written since are added. Run at open, before anything is served.
     */
    public Reconciled reconcile(Records records) throws IOException {
        searchers.maybeRefreshBlocking();
        RoaringBitmap covered = new RoaringBitmap();
        Set<Long> stale = new HashSet<>();
        int removed = 0;
        int[] removedDocs = {0};
        forEachLiveDocument(
                (ord, version, complete) -> {
                    if (!complete) {
                        throw new IOException(
                                "text index in "
                                        + folder
                                        + ": a document has no ordinal or version (damaged"
                                        + " index?)");
                    }
                    if (records.version(ord) == version
                            && records.text(ord) != null
                            && covered.checkedAdd(ord)) {
                        return;
                    }
                    stale.add(version);
                    removedDocs[0]++;
                });
        removed += removedDocs[0];
        if (!stale.isEmpty()) {
            // By version, which names one write: a duplicate of a valid document takes the valid
            // one with it, so that record is indexed again below.
            writer.deleteDocuments(LongPoint.newSetQuery(VERSION, stale));
            for (int ord : covered.toArray()) {
                if (stale.contains(records.version(ord))) {
                    covered.remove(ord);
                    removed++;
                }
            }
        }
        int added = 0;
        for (int ord : records.ordinals()) {
            String text = records.text(ord);
            if (text != null && !covered.contains(ord)) {
                add(ord, records.version(ord), text);
                added++;
            }
        }
        if (!stale.isEmpty()) {
            mergeDeletesAway();
        } else if (added > 0) {
            writer.commit();
        }
        searchers.maybeRefreshBlocking();
        return new Reconciled(removed, added);
    }

    /**
     * Receives a live document's ordinal and version ({@code complete} false when it lacks either).
     */
    @FunctionalInterface
    private interface LiveDocument {
        void accept(int ordinal, long version, boolean complete) throws IOException;
    }

    /** Every live (not deleted) document of the published reader, segment by segment. */
    private void forEachLiveDocument(LiveDocument visitor) throws IOException {
        IndexSearcher s = searchers.acquire();
        try {
            for (LeafReaderContext leaf : s.getIndexReader().leaves()) {
                LeafReader r = leaf.reader();
                NumericDocValues ords = r.getNumericDocValues(ORD);
                NumericDocValues versions = r.getNumericDocValues(VERSION);
                var live = r.getLiveDocs();
                for (int doc = 0; doc < r.maxDoc(); doc++) {
                    if (live != null && !live.get(doc)) {
                        continue;
                    }
                    boolean complete =
                            ords != null
                                    && versions != null
                                    && ords.advanceExact(doc)
                                    && versions.advanceExact(doc);
                    visitor.accept(
                            complete ? (int) ords.longValue() : -1,
                            complete ? versions.longValue() : -1,
                            complete);
                }
            }
        } finally {
            searchers.release(s);
        }
    }

    /**
     * The index's integrity check: one document per live record with text, at the record's version,
     * and none for anything else.
     */
    public IntegrityReport verifyIntegrity(Records records, String name) throws IOException {
        IntegrityReport.Builder r =
                IntegrityReport.builder(name)
                        .expect("stale-document")
                        .expect("duplicate-document")
                        .expect("record-missing-from-text-index");
        RoaringBitmap covered = new RoaringBitmap();
        int[] docs = {0};
        forEachLiveDocument(
                (ord, version, complete) -> {
                    docs[0]++;
                    if (!complete) {
                        r.violation("stale-document", "a document without ordinal or version");
                    } else if (records.version(ord) != version || records.text(ord) == null) {
                        r.violation("stale-document", "ordinal " + ord);
                    } else if (!covered.checkedAdd(ord)) {
                        r.violation("duplicate-document", "ordinal " + ord);
                    }
                });
        for (int ord : records.ordinals()) {
            if (records.text(ord) != null && !covered.contains(ord)) {
                r.violation("record-missing-from-text-index", "ordinal " + ord);
            }
        }
        r.checked("documents", docs[0]);
        return r.build();
    }

    // ---- forgetting ---------------------------------------------------------------------------

    /**
     * The text's most distinctive terms: its distinct analyzed terms, fewest documents first
     * (highest IDF), at most {@code n}. Run before the record leaves the index, so its own document
     * counts.
     */
    public List<String> distinctiveTerms(String text, int n) throws IOException {
        List<String> terms = terms(text);
        Map<String, Integer> df = new TreeMap<>();
        IndexSearcher s = searchers.acquire();
        try {
            for (String t : terms) {
                df.put(t, s.getIndexReader().docFreq(new Term(TEXT, t)));
            }
        } finally {
            searchers.release(s);
        }
        return df.entrySet().stream()
                .sorted(
                        Comparator.<Map.Entry<String, Integer>>comparingInt(Map.Entry::getValue)
                                .thenComparing(Map.Entry::getKey))
                .limit(n)
                .map(Map.Entry::getKey)
                .toList();
    }

    /**
     * What the verification found of forgotten text: documents of forgotten records still live,
     * deleted documents still holding a forgotten term, terms with no live document that a term
     * dictionary still lists, and files outside the index that hold a forgotten term's bytes.
     */
    public record Residue(List<String> problems, long checked) {}

    /**
     * Proves forgotten text is gone from every file of the folder. For the segments the index is
     * made of, by their structure: no live document carries a forgotten (ordinal, version); no
     * segment keeps a deleted document holding one of the forgotten terms (Lucene's delete only
     * marks; the postings of every segment are read, deleted documents included); and a forgotten
     * term no survivor holds is in no segment's term dictionary. A segment stores nothing else
     * derived from text (no stored fields, no term vectors; doc values hold the ordinal and
     * version), so that covers its files. Every other file in the folder (an old segment not yet
     * deleted, a leftover of a crash) is decrypted and scanned for the terms' bytes. The segments'
     * own files are not byte-scanned: their term dictionaries keep terms as shared prefixes and
     * suffixes, so a forgotten "ander" shows up inside a survivor's "wander" (false residue), and
     * the scan would cost the whole index per forget.
     *
     * @param forgotten (ordinal, version) of each forgotten record that had text
     * @param terms the forgotten texts' distinctive terms
     */
    public Residue residue(Map<Integer, Long> forgotten, Collection<String> terms)
            throws IOException {
        List<String> problems = new ArrayList<>();
        long checked = 0;
        forEachLiveDocument(
                (ord, version, complete) -> {
                    Long v = complete ? forgotten.get(ord) : null;
                    if (v != null && v == version) {
                        problems.add(
                                "a live document still indexes forgotten record at ordinal " + ord);
                    }
                });
        Set<String> referenced = new HashSet<>();
        IndexSearcher s = searchers.acquire();
        try {
            if (s.getIndexReader() instanceof StandardDirectoryReader r) {
                referenced.addAll(r.getSegmentInfos().files(true));
            }
            checked += TextForensics.deletedHolding(s, terms, problems);
        } finally {
            searchers.release(s);
        }
        if (DirectoryReader.indexExists(dir)) {
            List<IndexCommit> commits = DirectoryReader.listCommits(dir);
            referenced.addAll(commits.get(commits.size() - 1).getFileNames());
        }
        checked += TextForensics.strayFiles(dir, referenced, terms, problems);
        return new Residue(problems, checked);
    }

    /** A surviving document that shares terms with forgotten text. */
    public record Sharing(int ordinal, int shared) {}

    /**
     * Surviving documents among {@code accept} (null: all) holding at least {@code min} of the
     * terms, with how many each holds, most first (at most {@code limit}).
     */
    public List<Sharing> sharing(List<String> terms, int min, RoaringBitmap accept, int limit)
            throws IOException {
        if (terms.isEmpty()) {
            return List.of();
        }
        BooleanQuery.Builder b = new BooleanQuery.Builder();
        for (String t : terms) {
            // Each term scores 1 when present, so a document's score is how many it shares.
            b.add(
                    new ConstantScoreQuery(new TermQuery(new Term(TEXT, t))),
                    BooleanClause.Occur.SHOULD);
        }
        b.setMinimumNumberShouldMatch(min);
        Ranked r = run(b.build(), accept, limit);
        List<Sharing> out = new ArrayList<>(r.size());
        for (int i = 0; i < r.size(); i++) {
            out.add(new Sharing(r.ordinals()[i], Math.round(r.scores()[i])));
        }
        return out;
    }

    /**
     * Throws the index away for good (its collection is dropped): uncommitted changes are
     * discarded, every file is deleted and its key destroyed, durably.
     */
    public synchronized void destroy() throws IOException {
        if (closed) {
            return;
        }
        release(true);
        try {
            deleteFiles(dir);
            keystore.force();
        } finally {
            dir.close();
        }
    }

    /** Deletes every file of the folder but the write lock (each file's key goes with it). */
    private static void deleteFiles(EncryptedDirectory dir) throws IOException {
        for (String f : dir.listAll()) {
            if (!f.equals(IndexWriter.WRITE_LOCK_NAME)) {
                dir.deleteFile(f);
            }
        }
    }

    /**
     * Marks the index closed and lets go of the searchers and the writer (rolled back or closed).
     */
    private void release(boolean rollback) throws IOException {
        closed = true;
        try {
            searchers.close();
        } finally {
            if (rollback) {
                writer.rollback();
            } else {
                writer.close();
            }
        }
    }

    @Override
    public synchronized void close() throws IOException {
        shut(false);
    }

    /**
     * Closes without committing (the store is read-only after a failed write): what was added since
     * the last commit is dropped, and the next open reconciles the index with the records.
     */
    public synchronized void rollbackAndClose() throws IOException {
        shut(true);
    }

    private void shut(boolean rollback) throws IOException {
        if (closed) {
            return;
        }
        try {
            release(rollback);
        } finally {
            dir.close();
        }
    }

    /** Commits what is indexed, then closes. */
    public synchronized void commitAndClose() throws IOException {
        if (closed) {
            return;
        }
        try {
            writer.commit();
        } finally {
            close();
        }
    }
}
