/** eSpeak NG voices are `language[+variant]`: `en-us`, `en-us+f3`, `de`. Checked when a project's config is saved. */
export const ESPEAK_VOICE_PATTERN = "^[a-z]{2,3}(-[a-z0-9]{1,8})*(\\+[a-z0-9]{1,12})?$";
