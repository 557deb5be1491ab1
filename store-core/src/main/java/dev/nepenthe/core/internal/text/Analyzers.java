package dev.nepenthe.core.internal.text;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.AnalyzerWrapper;
import org.apache.lucene.analysis.core.SimpleAnalyzer;
import org.apache.lucene.analysis.core.WhitespaceAnalyzer;
import org.apache.lucene.analysis.de.GermanAnalyzer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.es.SpanishAnalyzer;
import org.apache.lucene.analysis.fr.FrenchAnalyzer;
import org.apache.lucene.analysis.it.ItalianAnalyzer;
import org.apache.lucene.analysis.nl.DutchAnalyzer;
import org.apache.lucene.analysis.pt.PortugueseAnalyzer;
import org.apache.lucene.analysis.standard.StandardAnalyzer;

/**
 * The analyzers a collection's text index may name, from lucene-core and lucene-analysis-common.
 * The name is stored with the collection, so an entry here is never renamed or changed in meaning.
 */
public final class Analyzers {

    private static final Map<String, Supplier<Analyzer>> BY_NAME = new LinkedHashMap<>();

    static {
        BY_NAME.put("standard", StandardAnalyzer::new);
        BY_NAME.put("english", EnglishAnalyzer::new);
        BY_NAME.put("simple", SimpleAnalyzer::new);
        BY_NAME.put("whitespace", WhitespaceAnalyzer::new);
        BY_NAME.put("german", GermanAnalyzer::new);
        BY_NAME.put("french", FrenchAnalyzer::new);
        BY_NAME.put("spanish", SpanishAnalyzer::new);
        BY_NAME.put("italian", ItalianAnalyzer::new);
        BY_NAME.put("portuguese", PortugueseAnalyzer::new);
        BY_NAME.put("dutch", DutchAnalyzer::new);
    }

    private Analyzers() {}

    /** The names a collection may use. */
    public static Set<String> names() {
        return BY_NAME.keySet();
    }

    /** Whether the name is known. */
    public static boolean known(String name) {
        return BY_NAME.containsKey(name);
    }

    /**
     * A new analyzer that builds fresh token stream components for every text. Lucene's analyzers
     * keep one set per thread and reuse it, and its term buffer keeps the last term of the last
     * text the thread analysed: a forgotten record's words would stay reachable in the heap until
     * that thread analysed something else (HeapHygieneTest found it). Fresh components cost an
     * allocation per text and leave nothing behind.
     *
     * @throws IllegalArgumentException naming the known analyzers
     */
    public static Analyzer create(String name) {
        Supplier<Analyzer> s = BY_NAME.get(name);
        if (s == null) {
            throw new IllegalArgumentException(
                    "text analyzer: expected one of " + BY_NAME.keySet() + ", got '" + name + "'");
        }
        return new Unshared(s.get());
    }

    /** Never reuses components between texts (see {@link #create}). */
    private static final class Unshared extends AnalyzerWrapper {
        private static final ReuseStrategy NEVER =
                new ReuseStrategy() {
                    @Override
                    public TokenStreamComponents getReusableComponents(
                            Analyzer analyzer, String fieldName) {
                        return null;
                    }

                    @Override
                    public void setReusableComponents(
                            Analyzer analyzer,
                            String fieldName,
                            TokenStreamComponents components) {}
                };

        private final Analyzer inner;

        Unshared(Analyzer inner) {
            super(NEVER);
            this.inner = inner;
        }

        @Override
        protected Analyzer getWrappedAnalyzer(String fieldName) {
            return inner;
        }

        @Override
        public void close() {
            inner.close();
            super.close();
        }
    }
}
