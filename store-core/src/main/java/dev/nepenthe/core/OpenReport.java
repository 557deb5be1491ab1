package dev.nepenthe.core;

import java.nio.file.Path;

/**
 * What a collection's storage found and decided when it opened: the records it loaded, those it
 * dropped (deleted or forgotten meanwhile, or superseded by a newer version), what the write-ahead
 * log replay cut, orphan files removed and whether the id map was rebuilt, repaired or trusted as
 * it was. Every decision is also logged, by keyed hash, never by id or content.
 *
 * @param liveRecords records loaded
 * @param droppedAsDeleted stored copies the tombstone journal names as deleted (a restored
 *     snapshot, or a crash between a deletion's journal entry and its checkpoint)
 * @param droppedAsSuperseded stored copies of a record at an ordinal a newer version holds (a sound
 *     store never leaves one; each is logged as a warning)
 * @param removedByLogDeletes records the write-ahead log's delete entries removed
 * @param log what the write-ahead log replay found
 * @param orphanFilesRemoved files no manifest names (a checkpoint cut short), removed
 * @param idMapRebuilt whether the id map was rebuilt from the records (it was not closed cleanly)
 * @param idMapRepairs id map entries added, changed or removed to agree with the records
 * @param idMapTrusted whether the id map was used without checking it against the records: it was
 *     closed cleanly over these very files (the manifest it was stamped with is the one opened, and
 *     the record count agrees) and the open replayed and dropped nothing; a crash, a restored
 *     snapshot or a log to replay makes the open check it instead
 * @param index whether the vector index was loaded from its persisted generation or built from the
 *     records, and why
 * @param text what opening did with the text index, or null when the collection has none
 */
public record OpenReport(
        int liveRecords,
        int droppedAsDeleted,
        int droppedAsSuperseded,
        int removedByLogDeletes,
        LogRecovery log,
        int orphanFilesRemoved,
        boolean idMapRebuilt,
        int idMapRepairs,
        boolean idMapTrusted,
        IndexRecovery index,
        TextRecovery text) {

    /**
     * The vector index at open (docs/STORAGE.md, "Persisted indexes").
     *
     * @param loaded true if it was loaded from a persisted, encrypted generation; false if it was
     *     built from the records
     * @param generation the generation loaded, or -1
     * @param added records written after that generation, added to the loaded index
     * @param removed ordinals the generation held that no record holds now at that version, removed
     *     from the loaded index
     * @param rebuiltBecause why it was built instead (no file yet; the file's key was destroyed
     *     when records left the index after it was written; the file failed, named, with the
     *     reason), or null when it was loaded
     * @param millis time the open spent on the index after the records were loaded: waiting for the
     *     file (read on its own thread beside the records) and catching up, or building
     */
    public record IndexRecovery(
            boolean loaded,
            long generation,
            int added,
            int removed,
            String rebuiltBecause,
            long millis) {}

    /**
     * The text index at open (docs/TEXT.md, "Where the text goes").
     *
     * @param rebuilt true if its files could not be read and it was built again from the records
     * @param removed documents removed because no record holds them now at that version
     * @param added records with text the index lacked, added (on a rebuild: every one)
     * @param rebuiltBecause what failed (the file and the reason), or null when it was not rebuilt
     */
    public record TextRecovery(boolean rebuilt, int removed, int added, String rebuiltBecause) {}

    /**
     * The write-ahead log replay.
     *
     * @param generations log files replayed
     * @param entries entries replayed
     * @param tornBytesDropped bytes of a torn tail (a write the crash interrupted, never
     *     acknowledged) cut off
     * @param tornFile the file whose tail was cut, or null
     */
    public record LogRecovery(
            int generations, long entries, long tornBytesDropped, Path tornFile) {}
}
