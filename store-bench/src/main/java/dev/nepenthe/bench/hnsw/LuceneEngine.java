package dev.nepenthe.bench.hnsw;

import dev.nepenthe.core.Metric;
import dev.nepenthe.testing.TestFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.lucene.codecs.KnnVectorsFormat;
import org.apache.lucene.codecs.lucene102.Lucene102HnswBinaryQuantizedVectorsFormat;
import org.apache.lucene.codecs.lucene103.Lucene103Codec;
import org.apache.lucene.codecs.lucene99.Lucene99HnswScalarQuantizedVectorsFormat;
import org.apache.lucene.codecs.lucene99.Lucene99HnswVectorsFormat;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.SerialMergeScheduler;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.TieredMergePolicy;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.RescoreTopNQuery;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;

/**
 * Lucene's HNSW as its users run it: an {@link IndexWriter} over {@link FSDirectory#open} (an
 * MMapDirectory) in a temporary folder deleted by {@link #close()}, a codec whose {@code
 * getKnnVectorsFormatForField} returns the format under test, one document per vector with a {@link
 * KnnFloatVectorField} and the harness's ordinal as a doc value, then {@code forceMerge(1)}, {@code
 * commit()}, {@link DirectoryReader#open} and an {@link IndexSearcher} without an executor. Build
 * time is the adds, the merge and the commit.
 *
 * <p>Formats: {@link Format#FLOAT} is {@link Lucene99HnswVectorsFormat}(M, efConstruction); {@link
 * Format#INT7} is {@link Lucene99HnswScalarQuantizedVectorsFormat} with 7 bits (not compressed,
 * Lucene's default confidence interval); {@link Format#BBQ} is {@link
 * Lucene102HnswBinaryQuantizedVectorsFormat}, Lucene 10.3's binary-quantized HNSW. All get one
 * merge worker and no merge executor. The quantized formats keep the raw float32 vectors on disk as
 * well ({@code .vec}, beside {@code .veq} or {@code .veb}): Lucene rebuilds quantiles and graphs
 * from them when it merges.
 *
 * <p>One flush: the RAM buffer is {@value #RAM_BUFFER_MB} MB, just under Lucene's per-thread hard
 * limit (1,945 MB), so an index that fits is written as one segment and {@code forceMerge(1)} has
 * nothing to merge. Lucene builds a segment's graph while documents are added, over the raw vectors
 * (for the quantized formats too); a merge would rebuild it, for the quantized formats with
 * quantized scores. An index larger than the buffer flushes more than once and pays for that merge
 * inside the build time. Compound files are off so each file's size can be reported ({@link
 * #footprint()}).
 *
 * <p>Searching: {@code new KnnFloatVectorQuery(field, query, ef)}. Lucene's k is also its beam: it
 * returns the ef best it found, and the harness keeps the top k of them (an {@code
 * IndexSearcher.search(query, k)} over those ef). Cosine runs as DOT_PRODUCT over the harness's
 * unit vectors (as Lucene advises), L2 as EUCLIDEAN.
 *
 * <p>Rescoring ({@link #rescored(int)}): Lucene 10.3 has a user-level query for it, {@link
 * RescoreTopNQuery#createFullPrecisionRescorerQuery}, which re-scores the hits of an inner query
 * with the full-precision vectors from {@code .vec} and keeps the best n. The rescoring engine asks
 * the quantized HNSW for {@code max(ef, oversample * k)} candidates and keeps the best k after
 * rescoring them all, as Elasticsearch's {@code rescore_vector.oversample} does; the plain engine
 * (no rescore) is reported beside it.
 *
 * <p>Deletes ({@link #delete(int[])}, for the delete harness): {@code deleteDocuments} by an id
 * term, then a near-real-time reader from the writer, with merges switched off: that is how Lucene
 * serves deletes before a merge (the graph keeps the deleted documents, the search skips them
 * through the live-docs bits).
 *
 * <p>Why run Lucene this way rather than through its internal graph classes: most Java vector
 * search runs on it like this, so it is the comparison our users can act on. The figures are in
 * docs/BENCHMARKS.md ("HNSW").
 */
final class LuceneEngine implements AnnEngine {

    /** The vector format under test. */
    enum Format {
        FLOAT("lucene"),
        INT7("lucene-int7"),
        BBQ("lucene-bbq");

        final String engineName;

        Format(String engineName) {
            this.engineName = engineName;
        }
    }

    static final int RAM_BUFFER_MB = 1900;
    private static final String VECTOR = "vector";
    private static final String ORDINAL = "ordinal";
    private static final String ID = "id";

    private final int m;
    private final int efConstruction;
    private final Format format;
    private final VectorSimilarityFunction similarity;
    private final boolean deletable;
    private Path folder;
    private Directory directory;
    private IndexWriter writer;
    private DirectoryReader reader;
    private volatile IndexSearcher searcher;

    /**
     * Lucene docID to the harness's ordinal. Deletes before a merge keep docIDs, so it is built
     * once.
     */
    private int[] docToOrdinal;

    private final List<Part> files = new ArrayList<>();

    /**
     * @param deletable index an id term per document so {@link #delete(int[])} can delete by term
     *     (the compare harness leaves it out: it would add postings to the build time)
     */
    LuceneEngine(int m, int efConstruction, Metric metric, Format format, boolean deletable) {
        this.m = m;
        this.efConstruction = efConstruction;
        this.format = format;
        this.similarity = similarity(metric);
        this.deletable = deletable;
    }

    static VectorSimilarityFunction similarity(Metric metric) {
        return metric == Metric.L2
                ? VectorSimilarityFunction.EUCLIDEAN
                : VectorSimilarityFunction.DOT_PRODUCT;
    }

    @Override
    public String name() {
        return format.engineName;
    }

    @Override
    public String buildNote() {
        return switch (format) {
                    case FLOAT -> "Lucene99HnswVectorsFormat";
                    case INT7 -> "Lucene99HnswScalarQuantizedVectorsFormat, 7 bits";
                    case BBQ -> "Lucene102HnswBinaryQuantizedVectorsFormat";
                }
                + ": addDocument + forceMerge(1) + commit, MMapDirectory";
    }

    private KnnVectorsFormat vectorsFormat() {
        return switch (format) {
            case FLOAT -> new Lucene99HnswVectorsFormat(m, efConstruction, 1, null);
            case INT7 ->
                    new Lucene99HnswScalarQuantizedVectorsFormat(
                            m, efConstruction, 1, 7, false, null, null);
            case BBQ -> new Lucene102HnswBinaryQuantizedVectorsFormat(m, efConstruction, 1, null);
        };
    }

    @Override
    public void build(float[][] data) throws IOException {
        folder = Files.createTempDirectory("nepenthe-lucene-" + name() + "-");
        directory = FSDirectory.open(folder);
        KnnVectorsFormat vectors = vectorsFormat();
        TieredMergePolicy merges = new TieredMergePolicy();
        merges.setNoCFSRatio(0.0);
        IndexWriterConfig config =
                new IndexWriterConfig()
                        .setCodec(
                                new Lucene103Codec() {
                                    @Override
                                    public KnnVectorsFormat getKnnVectorsFormatForField(
                                            String field) {
                                        return vectors;
                                    }
                                })
                        .setOpenMode(IndexWriterConfig.OpenMode.CREATE)
                        .setRAMBufferSizeMB(RAM_BUFFER_MB)
                        .setUseCompoundFile(false)
                        .setMergePolicy(merges)
                        .setMergeScheduler(new SerialMergeScheduler());
        writer = new IndexWriter(directory, config);
        for (int i = 0; i < data.length; i++) {
            Document doc = new Document();
            doc.add(new KnnFloatVectorField(VECTOR, data[i], similarity));
            doc.add(new NumericDocValuesField(ORDINAL, i));
            if (deletable) {
                doc.add(new StringField(ID, Integer.toString(i), Field.Store.NO));
            }
            writer.addDocument(doc);
        }
        writer.forceMerge(1);
        writer.commit();
        reader = DirectoryReader.open(directory);
        searcher = new IndexSearcher(reader);
        docToOrdinal = docToOrdinal(reader);
        measureFiles();
    }

    private static int[] docToOrdinal(DirectoryReader reader) throws IOException {
        int[] map = new int[reader.maxDoc()];
        for (LeafReaderContext leaf : reader.leaves()) {
            NumericDocValues ordinals = leaf.reader().getNumericDocValues(ORDINAL);
            for (int doc = ordinals.nextDoc();
                    doc != DocIdSetIterator.NO_MORE_DOCS;
                    doc = ordinals.nextDoc()) {
                map[leaf.docBase + doc] = (int) ordinals.longValue();
            }
        }
        return map;
    }

    /**
     * Bytes on disk per file extension of the committed index ({@code segments_N} counted as
     * "segments").
     */
    private void measureFiles() throws IOException {
        Map<String, Long> byKind = new TreeMap<>();
        for (String file : directory.listAll()) {
            long bytes = directory.fileLength(file);
            if (bytes == 0) {
                continue; // write.lock
            }
            String kind =
                    file.startsWith("segments")
                            ? "segments"
                            : file.substring(file.lastIndexOf('.') + 1);
            byKind.merge(kind, bytes, Long::sum);
        }
        files.clear();
        byKind.forEach((kind, bytes) -> files.add(new Part(describe(kind), bytes)));
    }

    private static String describe(String extension) {
        return "."
                + extension
                + switch (extension) {
                    case "vec" -> " (raw float32 vectors)";
                    case "vex" -> " (HNSW graph)";
                    case "veq" -> " (int7 quantized vectors)";
                    case "veb" -> " (binary quantized vectors)";
                    case "vem", "vemf", "vemq", "vemb" -> " (vector metadata)";
                    case "dvd", "dvm" -> " (ordinal doc values)";
                    case "tim", "tip", "tmd", "doc", "psm" -> " (id terms)";
                    default -> "";
                };
    }

    @Override
    public List<Part> footprint() {
        return List.copyOf(files);
    }

    @Override
    public int[] search(float[] query, int k, int ef) throws IOException {
        return topK(new KnnFloatVectorQuery(VECTOR, query, Math.max(k, ef)), k);
    }

    private int[] topK(Query query, int k) throws IOException {
        ScoreDoc[] docs = searcher.search(query, k).scoreDocs;
        int[] out = new int[docs.length];
        for (int i = 0; i < docs.length; i++) {
            out[i] = docToOrdinal[docs[i].doc];
        }
        return out;
    }

    /**
     * The same index searched with a full-precision rescore of {@code max(ef, oversample * k)}
     * quantized candidates (see the class comment).
     */
    AnnEngine rescored(int oversample) {
        LuceneEngine index = this;
        return new AnnEngine() {
            @Override
            public String name() {
                return index.name() + "+rescore";
            }

            @Override
            public String buildNote() {
                return "nothing ("
                        + index.name()
                        + "'s index; RescoreTopNQuery.createFullPrecisionRescorerQuery"
                        + " over max(ef, "
                        + oversample
                        + " * k) candidates)";
            }

            @Override
            public String sharesIndexOf() {
                return index.name();
            }

            // Nothing to add: the rescore reads the raw vectors the index already holds.
            @Override
            public void build(float[][] data) {}

            @Override
            public int[] search(float[] query, int k, int ef) throws IOException {
                int candidates = Math.max(Math.max(k, ef), oversample * k);
                Query approximate = new KnnFloatVectorQuery(VECTOR, query, candidates);
                return index.topK(
                        RescoreTopNQuery.createFullPrecisionRescorerQuery(
                                approximate, query, VECTOR, k),
                        k);
            }
        };
    }

    /**
     * Deleted documents the open reader's segments still hold (their vectors and graph nodes,
     * skipped by searches through the live-docs bits until a merge rewrites the segment).
     */
    int deletedStillIndexed() {
        return reader.maxDoc() - reader.numDocs();
    }

    /**
     * Deletes these ordinals by id term and reopens a near-real-time reader from the writer. Merges
     * are switched off first, so the graph keeps the deleted documents and searches skip them, as
     * Lucene does until a merge.
     */
    void delete(int[] ordinals) throws IOException {
        if (!deletable) {
            throw new IllegalStateException(
                    name() + " was built without id terms (deletable=false)");
        }
        writer.getConfig().setMergePolicy(NoMergePolicy.INSTANCE);
        Term[] ids = new Term[ordinals.length];
        for (int i = 0; i < ordinals.length; i++) {
            ids[i] = new Term(ID, Integer.toString(ordinals[i]));
        }
        writer.deleteDocuments(ids);
        DirectoryReader fresh = DirectoryReader.openIfChanged(reader, writer);
        if (fresh != null) {
            reader.close();
            reader = fresh;
            searcher = new IndexSearcher(reader);
        }
    }

    @Override
    public void close() throws IOException {
        try {
            if (reader != null) {
                reader.close();
            }
            if (writer != null) {
                writer.rollback(); // nothing left to commit; drops the writer without flushing
                // deletes
            }
            if (directory != null) {
                directory.close();
            }
        } finally {
            if (folder != null) {
                TestFiles.deleteTree(folder);
            }
        }
    }
}
