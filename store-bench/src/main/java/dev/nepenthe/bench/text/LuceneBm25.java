package dev.nepenthe.bench.text;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;

/**
 * Lucene used directly, the way its users run BM25 search: an {@link IndexWriter} with {@link
 * EnglishAnalyzer} and default settings on {@link FSDirectory#open} (memory-mapped on 64-bit JVMs),
 * one document per text (the text analysed and not stored, the caller's id stored), committed; then
 * an {@link IndexSearcher} over a {@link DirectoryReader}. A query is its analysed terms as SHOULD
 * term clauses, the form our text index uses, searched with {@code IndexSearcher.search(query, k)}
 * (hit counting stops at 1,000, as ours does); the hits' ids are read from the stored fields, which
 * is how a Lucene user gets from a hit back to a record. Nothing is encrypted.
 */
final class LuceneBm25 implements Closeable {

    private static final String TEXT = "text";
    private static final String ID = "id";
    private static final Set<String> ID_ONLY = Set.of(ID);

    private final Analyzer analyzer = new EnglishAnalyzer();
    private final Directory dir;
    private final DirectoryReader reader;
    private final IndexSearcher searcher;

    private LuceneBm25(Directory dir) throws IOException {
        this.dir = dir;
        this.reader = DirectoryReader.open(dir);
        this.searcher = new IndexSearcher(reader);
    }

    /** Indexes the texts under their ids in {@code folder}, commits, and opens a searcher. */
    static LuceneBm25 build(Path folder, List<String> ids, List<String> texts) throws IOException {
        Directory dir = FSDirectory.open(folder);
        try {
            try (IndexWriter w =
                    new IndexWriter(dir, new IndexWriterConfig(new EnglishAnalyzer()))) {
                for (int i = 0; i < texts.size(); i++) {
                    Document d = new Document();
                    d.add(new TextField(TEXT, texts.get(i), Field.Store.NO));
                    d.add(new StoredField(ID, ids.get(i)));
                    w.addDocument(d);
                }
                w.commit();
            }
            return new LuceneBm25(dir);
        } catch (IOException | RuntimeException e) {
            dir.close();
            throw e;
        }
    }

    /** The k best documents by BM25, best first: their ids and scores. */
    // A carrier of results, never compared or hashed; the scores are handed over, not copied.
    @SuppressWarnings("ArrayRecordComponent")
    record Hits(List<String> ids, float[] scores) {
        int size() {
            return ids.size();
        }
    }

    /** The k best documents by BM25, best first. */
    Hits search(String text, int k) throws IOException {
        BooleanQuery.Builder b = new BooleanQuery.Builder();
        int clauses = 0;
        for (String t : terms(text)) {
            b.add(new TermQuery(new Term(TEXT, t)), BooleanClause.Occur.SHOULD);
            clauses++;
        }
        if (clauses == 0) {
            return new Hits(List.of(), new float[0]);
        }
        TopDocs top = searcher.search(b.build(), k);
        StoredFields stored = searcher.storedFields();
        List<String> ids = new ArrayList<>(top.scoreDocs.length);
        float[] scores = new float[top.scoreDocs.length];
        for (ScoreDoc sd : top.scoreDocs) {
            scores[ids.size()] = sd.score;
            ids.add(stored.document(sd.doc, ID_ONLY).get(ID));
        }
        return new Hits(ids, scores);
    }

    /**
     * The text's analysed terms, distinct, in order of appearance (as our text index builds its
     * query).
     */
    private List<String> terms(String text) {
        Set<String> out = new LinkedHashSet<>();
        try (TokenStream ts = analyzer.tokenStream(TEXT, text)) {
            CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
            ts.reset();
            while (ts.incrementToken()) {
                out.add(term.toString());
            }
            ts.end();
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "analysing a query failed", e); // a StringReader does not fail
        }
        return new ArrayList<>(out);
    }

    /** Segments the searcher sees. */
    int segments() {
        return reader.leaves().size();
    }

    @Override
    public void close() throws IOException {
        try {
            reader.close();
        } finally {
            try {
                dir.close();
            } finally {
                analyzer.close();
            }
        }
    }
}
