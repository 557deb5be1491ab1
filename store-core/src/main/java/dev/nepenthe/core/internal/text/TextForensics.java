package dev.nepenthe.core.internal.text;

import dev.nepenthe.core.internal.io.ForensicScan;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.lucene.index.CorruptIndexException;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.util.BytesRef;

/**
 * The checks that prove forgotten text gone from a text index folder, apart from the index's own
 * reads and writes: postings of deleted documents (Lucene's delete only marks), files outside the
 * index decrypted and byte-scanned, and the forensic scan of a whole folder with the keystore. See
 * {@link TextIndex#residue} for why the segments' own files are checked by structure instead.
 */
final class TextForensics {
    private TextForensics() {}

    /** See {@link TextIndex#scanPlaintext}: the folder opened as {@code dir}. */
    static TextIndex.FolderScan scanPlaintext(EncryptedDirectory dir, List<byte[]> needles)
            throws IOException {
        Map<String, Integer> hits = new TreeMap<>();
        List<String> unreadable = new ArrayList<>();
        for (String f : dir.listAll()) {
            if (f.equals(IndexWriter.WRITE_LOCK_NAME)) {
                continue;
            }
            byte[] plain;
            try {
                plain = dir.readPlaintext(f);
            } catch (CorruptIndexException e) {
                unreadable.add(f);
                continue;
            }
            int n = ForensicScan.countAny(plain, needles);
            Arrays.fill(plain, (byte) 0);
            if (n > 0) {
                hits.put(f, n);
            }
        }
        return new TextIndex.FolderScan(hits, unreadable);
    }

    /**
     * Adds a problem for each segment in which deleted documents still hold one of {@code terms}
     * (the term stays in the segment's dictionary, and in its files, until a merge); returns how
     * many terms it checked.
     */
    static long deletedHolding(IndexSearcher s, Collection<String> terms, List<String> problems)
            throws IOException {
        long checked = 0;
        for (String t : terms) {
            checked++;
            BytesRef bytes = new BytesRef(t);
            for (LeafReaderContext leaf : s.getIndexReader().leaves()) {
                LeafReader r = leaf.reader();
                Terms ts = r.terms(TextIndex.TEXT);
                if (ts == null) {
                    continue;
                }
                TermsEnum te = ts.iterator();
                if (!te.seekExact(bytes)) {
                    continue;
                }
                var live = r.getLiveDocs();
                PostingsEnum pe = te.postings(null, PostingsEnum.NONE);
                int deletedHolding = 0;
                for (int doc = pe.nextDoc(); doc != PostingsEnum.NO_MORE_DOCS; doc = pe.nextDoc()) {
                    if (live != null && !live.get(doc)) {
                        deletedHolding++;
                    }
                }
                if (deletedHolding > 0) {
                    // The term stays in the segment's dictionary, and in its files, until a
                    // merge.
                    problems.add(
                            deletedHolding
                                    + " deleted documents in a segment still hold a forgotten"
                                    + " term (not merged away)");
                }
            }
        }
        return checked;
    }

    /**
     * Decrypts every file of {@code dir} the index does not reference and adds a problem for each
     * that holds a forgotten term's bytes; returns how many files it checked.
     */
    static long strayFiles(
            EncryptedDirectory dir,
            Set<String> referenced,
            Collection<String> terms,
            List<String> problems)
            throws IOException {
        long checked = 0;
        List<byte[]> needles = new ArrayList<>();
        for (String t : terms) {
            byte[] b = t.getBytes(StandardCharsets.UTF_8);
            if (b.length >= TextIndex.MIN_TERM_BYTES) {
                needles.add(b);
            }
        }
        for (String f : dir.listAll()) {
            if (f.equals(IndexWriter.WRITE_LOCK_NAME)
                    || referenced.contains(f)
                    || needles.isEmpty()) {
                continue;
            }
            checked++;
            byte[] plain;
            try {
                plain = dir.readPlaintext(f);
            } catch (NoSuchFileException e) {
                continue; // deleted while listing
            } catch (CorruptIndexException e) {
                continue; // its key is destroyed: nothing in it can be read
            }
            try {
                int n = ForensicScan.countAny(plain, needles);
                if (n > 0) {
                    problems.add(
                            "text index file "
                                    + f
                                    + ", which is not part of the index, holds "
                                    + n
                                    + " occurrences of forgotten terms");
                }
            } finally {
                Arrays.fill(plain, (byte) 0);
            }
        }
        return checked;
    }
}
