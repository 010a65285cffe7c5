/** Voice activity detection: classifies one frame of 16 kHz audio as speech or not. */
export interface VoiceActivityDetector {
  isSpeech(frame: Int16Array): boolean;
  close(): void;
}
